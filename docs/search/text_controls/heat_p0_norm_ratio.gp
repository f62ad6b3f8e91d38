# scripts/text_phase.py: p0_norm_ratio, mean over seeds. Redraw in this directory: gnuplot heat_p0_norm_ratio.gp
if (!exists("outfile")) outfile = "heat_p0_norm_ratio.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "max over blocks of p0_norm_ratio"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
1.19437 1.18705
0.856595 0.916783
0.903893 0.86247
1.06428 0.90776
1.24776 0.978382
1.32638 1.03812
1.4299 1.16288
1.5366 1.33458
1.66463 1.51453
1.65707 1.58304
1.64646 1.64105
1.61406 1.63825
1.64167 1.63429
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "main" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
