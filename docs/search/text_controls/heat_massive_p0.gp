# scripts/text_phase.py: massive_p0, mean over seeds. Redraw in this directory: gnuplot heat_massive_p0.gp
if (!exists("outfile")) outfile = "heat_massive_p0.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "massive-activation ratio at P0 (max over blocks)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
5.13946 6.30945
3.35487 4.51065
4.03579 5.49051
5.14527 6.28194
6.53363 6.63555
8.06772 6.9951
9.03656 7.75087
10.7451 9.45458
11.8638 11.9575
12.5124 13.5245
12.8862 14.9641
13.5962 17.3861
14.6579 18.4226
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "main" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
