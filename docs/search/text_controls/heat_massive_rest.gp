# scripts/text_phase.py: massive_rest, mean over seeds. Redraw in this directory: gnuplot heat_massive_rest.gp
if (!exists("outfile")) outfile = "heat_massive_rest.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "massive-activation ratio away from P0 (max over blocks)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
6.54555 6.78971 6.69244 6.78972 14.2692
6.80299 6.99059 5.84082 7.09092 17.8832
9.61363 8.98356 7.53501 11.3652 22.3164
11.1062 11.0022 9.08032 13.5098 24.1357
13.2019 12.1774 10.5792 15.9727 29.5479
15.8822 14.1 11.9227 17.2442 34.7095
18.5062 15.6107 13.4133 18.867 43.8018
21.3016 18.4839 15.1931 19.2201 35.0583
23.832 20.7565 16.9225 19.1778 33.6244
24.3698 22.0771 20.7821 19.8157 30.2232
25.2797 23.715 22.4944 21.0574 28.5284
26.2677 25.0233 23.0397 21.5386 30.4376
25.5213 25.4754 24.2594 21.485 27.2837
EOD
set xrange [-0.5:4.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "document" 1, "main" 2, "rope" 3, "sigmoid" 4)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
