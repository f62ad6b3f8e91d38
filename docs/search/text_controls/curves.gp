# scripts/text_phase.py: each metric over training tokens, mean over seeds per variant.
# Redraw in this directory: gnuplot curves.gp
if (!exists("outfile")) outfile = "curves.png"
set terminal pngcairo noenhanced size 1200,760 font "sans,10"
set output outfile
set key top right font ",8"
set xlabel "training tokens (millions)"
set grid
set datafile missing "nan"
$sink_1 << EOD
# tokens_M bos document main rope sigmoid
0 0 0 0 0 0
1.024 0 0 0 0 0.00416667
2.048 0 0.000520833 0 0 0.00208333
3.072 0.000520833 0.00208333 0 0 0.0015625
4.096 0 0.00104167 0 0 0.00208333
5.12 0 0.000520833 0 0 0.00416667
6.144 0 0 0 0 0.00364583
7.168 0 0 0 0 0.00625
8.192 0 0 0 0 0.0135417
9.216 0 0 0 0 0.0130208
10.24 0 0 0 0 0.01875
11.264 0 0 0 0 0.021875
12.288 0 0 0 0 0.03125
EOD
$p0_norm_ratio << EOD
# tokens_M bos document main rope sigmoid
0 1.19437 1.18694 1.18705 1.18398 0.140073
1.024 0.856595 0.811929 0.916783 1.01057 0.0420043
2.048 0.903893 0.881665 0.86247 1.0497 0.0750001
3.072 1.06428 0.978732 0.90776 1.06113 0.107745
4.096 1.24776 1.07492 0.978382 1.084 0.164904
5.12 1.32638 1.16539 1.03812 1.09055 0.230002
6.144 1.4299 1.29642 1.16288 1.09448 0.34975
7.168 1.5366 1.44928 1.33458 1.11443 0.588841
8.192 1.66463 1.59441 1.51453 1.14814 0.84686
9.216 1.65707 1.70755 1.58304 1.14509 1.00059
10.24 1.64646 1.75213 1.64105 1.14078 1.06946
11.264 1.61406 1.73841 1.63825 1.14615 1.12312
12.288 1.64167 1.68817 1.63429 1.14667 1.12482
EOD
$p0_cos << EOD
# tokens_M bos document main rope sigmoid
0 1 0.0669677 0.0608943 0.0620641 0.0400723
1.024 1 0.221364 0.264325 0.301612 0.523344
2.048 1 0.274811 0.240926 0.345567 0.438949
3.072 1 0.287801 0.234246 0.334197 0.434892
4.096 1 0.33938 0.24194 0.341441 0.437458
5.12 1 0.422505 0.246839 0.343267 0.432998
6.144 1 0.559004 0.375317 0.337464 0.561484
7.168 1 0.692325 0.588713 0.353528 0.612283
8.192 1 0.753462 0.798952 0.392921 0.527214
9.216 1 0.766445 0.821083 0.395542 0.498436
10.24 1 0.755422 0.837164 0.406401 0.515518
11.264 1 0.733821 0.847745 0.42675 0.519568
12.288 1 0.734553 0.842952 0.467254 0.591932
EOD
$massive_p0 << EOD
# tokens_M bos document main rope sigmoid
0 5.13946 6.34507 6.30945 6.34373 0.868738
1.024 3.35487 3.91563 4.51065 5.34577 0.38912
2.048 4.03579 5.30704 5.49051 7.33392 0.740551
3.072 5.14527 7.31325 6.28194 8.9099 1.14793
4.096 6.53363 8.33517 6.63555 11.2371 1.54019
5.12 8.06772 9.0059 6.9951 12.745 2.22309
6.144 9.03656 10.5749 7.75087 13.6775 3.10889
7.168 10.7451 13.195 9.45458 15.7153 5.31839
8.192 11.8638 14.5747 11.9575 16.4761 7.51518
9.216 12.5124 17.2008 13.5245 16.775 9.33338
10.24 12.8862 18.9047 14.9641 17.5194 11.3531
11.264 13.5962 20.4017 17.3861 18.0715 12.3275
12.288 14.6579 21.0758 18.4226 18.3202 13.49
EOD
$massive_rest << EOD
# tokens_M bos document main rope sigmoid
0 6.54555 6.78971 6.69244 6.78972 14.2692
1.024 6.80299 6.99059 5.84082 7.09092 17.8832
2.048 9.61363 8.98356 7.53501 11.3652 22.3164
3.072 11.1062 11.0022 9.08032 13.5098 24.1357
4.096 13.2019 12.1774 10.5792 15.9727 29.5479
5.12 15.8822 14.1 11.9227 17.2442 34.7095
6.144 18.5062 15.6107 13.4133 18.867 43.8018
7.168 21.3016 18.4839 15.1931 19.2201 35.0583
8.192 23.832 20.7565 16.9225 19.1778 33.6244
9.216 24.3698 22.0771 20.7821 19.8157 30.2232
10.24 25.2797 23.715 22.4944 21.0574 28.5284
11.264 26.2677 25.0233 23.0397 21.5386 30.4376
12.288 25.5213 25.4754 24.2594 21.485 27.2837
EOD
$heldout_bpb << EOD
# tokens_M bos document main rope sigmoid
0 8.01967 8.00672 8.02001 8.02205 8.02041
1.024 3.76661 3.76497 3.78002 3.37808 3.96301
2.048 3.69534 3.69634 3.73124 3.05531 3.86158
3.072 3.64074 3.65827 3.69537 2.89571 3.80302
4.096 3.57751 3.63321 3.6621 2.78646 3.77186
5.12 3.51479 3.59617 3.63357 2.71525 3.71953
6.144 3.43915 3.56047 3.59879 2.66296 3.66356
7.168 3.35629 3.4971 3.54132 2.61444 3.5541
8.192 3.26827 3.4217 3.48168 2.593 3.42906
9.216 3.1846 3.33395 3.41536 2.56715 3.30395
10.24 3.09276 3.25872 3.33912 2.54496 3.21671
11.264 3.04622 3.17912 3.27165 2.53466 3.14608
12.288 2.98672 3.12394 3.21204 2.51214 3.10391
EOD
set multiplot layout 2,3 title "text task: probes over training (mean over seeds)"
set title "Sink_1 (eps 0.3): fraction of heads sinking on position 0"
set yrange [0.0:1.0]
plot $sink_1 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "bos", \
     $sink_1 using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "document", \
     $sink_1 using 1:4 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $sink_1 using 1:5 with linespoints lw 2 pt 7 ps 0.5 title "rope", \
     $sink_1 using 1:6 with linespoints lw 2 pt 7 ps 0.5 title "sigmoid"
set title "max over blocks of p0_norm_ratio"
set autoscale y
plot $p0_norm_ratio using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "bos", \
     $p0_norm_ratio using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "document", \
     $p0_norm_ratio using 1:4 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $p0_norm_ratio using 1:5 with linespoints lw 2 pt 7 ps 0.5 title "rope", \
     $p0_norm_ratio using 1:6 with linespoints lw 2 pt 7 ps 0.5 title "sigmoid"
set title "p0_cos at the block of the largest ratio"
set yrange [-1.0:1.0]
plot $p0_cos using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "bos", \
     $p0_cos using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "document", \
     $p0_cos using 1:4 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $p0_cos using 1:5 with linespoints lw 2 pt 7 ps 0.5 title "rope", \
     $p0_cos using 1:6 with linespoints lw 2 pt 7 ps 0.5 title "sigmoid"
set title "massive-activation ratio at P0 (max over blocks)"
set autoscale y
plot $massive_p0 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "bos", \
     $massive_p0 using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "document", \
     $massive_p0 using 1:4 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $massive_p0 using 1:5 with linespoints lw 2 pt 7 ps 0.5 title "rope", \
     $massive_p0 using 1:6 with linespoints lw 2 pt 7 ps 0.5 title "sigmoid"
set title "massive-activation ratio away from P0 (max over blocks)"
set autoscale y
plot $massive_rest using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "bos", \
     $massive_rest using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "document", \
     $massive_rest using 1:4 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $massive_rest using 1:5 with linespoints lw 2 pt 7 ps 0.5 title "rope", \
     $massive_rest using 1:6 with linespoints lw 2 pt 7 ps 0.5 title "sigmoid"
set title "held-out bits per byte (probe batch)"
set autoscale y
plot $heldout_bpb using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "bos", \
     $heldout_bpb using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "document", \
     $heldout_bpb using 1:4 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $heldout_bpb using 1:5 with linespoints lw 2 pt 7 ps 0.5 title "rope", \
     $heldout_bpb using 1:6 with linespoints lw 2 pt 7 ps 0.5 title "sigmoid"
unset multiplot
