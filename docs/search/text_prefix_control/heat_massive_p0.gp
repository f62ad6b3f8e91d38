# scripts/text_phase.py: massive_p0, mean over seeds. Redraw in this directory: gnuplot heat_massive_p0.gp
if (!exists("outfile")) outfile = "heat_massive_p0.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "massive-activation ratio at P0 (max over blocks)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
6.30141 6.04246
5.90316 4.94584
7.59369 6.27956
9.69728 7.32666
11.3324 9.06562
12.5355 10.138
13.6564 11.7419
13.7557 12.9293
14.1002 13.4968
14.3984 14.154
15.5341 15.676
15.795 15.9042
16.2821 16.3928
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("main" 0, "prefix-bidirectional" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
