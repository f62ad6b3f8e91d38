# scripts/text_phase.py: massive_rest, mean over seeds. Redraw in this directory: gnuplot heat_massive_rest.gp
if (!exists("outfile")) outfile = "heat_massive_rest.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "massive-activation ratio away from P0 (max over blocks)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
6.2072 6.21374 6.49882 6.49363 6.14445 6.48313 6.46465
8.60538 8.17099 8.05499 6.03305 5.88023 6.62259 7.0039
11.6677 11.028 9.94297 8.34086 7.4239 7.59089 9.07098
14.1125 13.8077 11.5659 10.2489 8.64778 9.01789 10.8224
15.6401 15.2658 14.2722 11.5246 9.09465 10.192 12.1908
16.0036 16.7891 16.2492 15.4926 10.2886 11.0737 12.4359
17.3588 17.3535 18.1122 17.7923 11.3218 11.7273 12.7956
18.5781 17.799 19.5896 19.0344 13.1512 12.7203 13.3228
19.4569 18.6173 20.9152 20.1817 16.7186 13.0986 13.8353
19.5727 19.2783 20.9264 20.925 17.7215 13.8745 13.5509
19.6864 19.3908 22.651 21.7732 19.6189 14.0999 14.194
20.7583 20.3674 21.5029 22.112 22.9036 14.8265 14.6286
20.4286 20.7252 23.0991 23.3219 23.488 14.519 14.6054
EOD
set xrange [-0.5:6.5]
set yrange [-0.5:12.5]
set xtics ("T16" 0, "T32" 1, "T64" 2, "T128" 3, "T256" 4, "T512" 5, "T1024" 6)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
