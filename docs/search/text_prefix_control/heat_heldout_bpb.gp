# scripts/text_phase.py: heldout_bpb, mean over seeds. Redraw in this directory: gnuplot heat_heldout_bpb.gp
if (!exists("outfile")) outfile = "heat_heldout_bpb.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "held-out bits per byte (probe batch)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
8.01701 8.03126
3.45649 3.61195
3.24087 3.53096
3.08177 3.48043
3.01236 3.45723
2.93265 3.43717
2.88634 3.42711
2.86513 3.39297
2.79356 3.39143
2.78706 3.36102
2.76019 3.38198
2.73174 3.38405
2.73619 3.36025
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("main" 0, "prefix-bidirectional" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
