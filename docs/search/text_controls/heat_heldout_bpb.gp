# scripts/text_phase.py: heldout_bpb, mean over seeds. Redraw in this directory: gnuplot heat_heldout_bpb.gp
if (!exists("outfile")) outfile = "heat_heldout_bpb.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "held-out bits per byte (probe batch)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
8.01967 8.02001
3.76661 3.78002
3.69534 3.73124
3.64074 3.69537
3.57751 3.6621
3.51479 3.63357
3.43915 3.59879
3.35629 3.54132
3.26827 3.48168
3.1846 3.41536
3.09276 3.33912
3.04622 3.27165
2.98672 3.21204
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "main" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
