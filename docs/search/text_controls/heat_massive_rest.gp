# scripts/text_phase.py: massive_rest, mean over seeds. Redraw in this directory: gnuplot heat_massive_rest.gp
if (!exists("outfile")) outfile = "heat_massive_rest.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "massive-activation ratio away from P0 (max over blocks)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
6.54555 6.69244
6.80299 5.84082
9.61363 7.53501
11.1062 9.08032
13.2019 10.5792
15.8822 11.9227
18.5062 13.4133
21.3016 15.1931
23.832 16.9225
24.3698 20.7821
25.2797 22.4944
26.2677 23.0397
25.5213 24.2594
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "main" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
