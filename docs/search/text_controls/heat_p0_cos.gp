# scripts/text_phase.py: p0_cos, mean over seeds. Redraw in this directory: gnuplot heat_p0_cos.gp
if (!exists("outfile")) outfile = "heat_p0_cos.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "p0_cos at the block of the largest ratio"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
1 0.0608943
1 0.264325
1 0.240926
1 0.234246
1 0.24194
1 0.246839
1 0.375317
1 0.588713
1 0.798952
1 0.821083
1 0.837164
1 0.847745
1 0.842952
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "main" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
set cbrange [-1.0:1.0]
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
