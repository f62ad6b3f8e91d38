# scripts/text_phase.py: p0_norm_ratio, mean over seeds. Redraw in this directory: gnuplot heat_p0_norm_ratio.gp
if (!exists("outfile")) outfile = "heat_p0_norm_ratio.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "max over blocks of p0_norm_ratio"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
1.13913 1.1602
1.18183 0.944996
1.31652 0.969226
1.37369 0.988288
1.44091 0.998341
1.46569 1.01739
1.46293 1.0274
1.49441 1.05674
1.50322 1.05936
1.51712 1.07462
1.5233 1.09555
1.54685 1.0914
1.55007 1.10514
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("main" 0, "prefix-bidirectional" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
