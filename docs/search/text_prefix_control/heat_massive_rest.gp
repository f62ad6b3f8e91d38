# scripts/text_phase.py: massive_rest, mean over seeds. Redraw in this directory: gnuplot heat_massive_rest.gp
if (!exists("outfile")) outfile = "heat_massive_rest.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "massive-activation ratio away from P0 (max over blocks)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
6.16198 6.31621
8.0738 7.67691
11.1067 10.7772
13.7668 12.9426
15.9983 15.2843
16.8695 15.8185
18.3841 16.6362
19.8057 17.6797
19.5166 17.5344
19.8847 18.3995
20.8464 19.2449
20.8932 18.9923
22.1172 20.2593
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("main" 0, "prefix-bidirectional" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
