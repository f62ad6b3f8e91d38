# scripts/text_phase.py: massive_p0, mean over seeds. Redraw in this directory: gnuplot heat_massive_p0.gp
if (!exists("outfile")) outfile = "heat_massive_p0.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "massive-activation ratio at P0 (max over blocks)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
5.93466 6.39285 6.84694 6.13901 6.25071 6.85442 6.52112
5.60869 5.88527 5.68532 5.23228 4.55738 5.03288 5.62367
7.12218 6.85555 7.19524 6.19757 5.09375 4.8341 6.30592
8.30316 7.56302 8.39667 6.91793 6.01889 5.26022 5.46384
9.63557 8.73302 8.738 7.52405 6.48724 5.62623 6.2784
10.2371 9.10508 10.8874 9.10424 7.10356 6.06372 6.64749
11.6288 10.1398 11.4708 12.1293 7.45439 6.56861 6.92338
12.8789 11.2229 12.3113 15.0017 9.10023 7.54333 6.41324
12.914 10.8954 12.5571 15.9355 11.5556 7.21651 7.72941
14.073 11.6423 13.8643 18.3526 16.2417 7.83016 7.58704
14.5457 12.5882 14.1564 19.8593 17.6837 8.64108 7.65324
14.044 13.7527 14.269 21.1309 20.3501 9.32011 8.61982
15.3976 13.2981 14.9507 21.9879 22.4868 9.21806 9.11382
EOD
set xrange [-0.5:6.5]
set yrange [-0.5:12.5]
set xtics ("T16" 0, "T32" 1, "T64" 2, "T128" 3, "T256" 4, "T512" 5, "T1024" 6)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
