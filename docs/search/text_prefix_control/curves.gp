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
# tokens_M main prefix-bidirectional
0 0 0
1.024 0.01875 0.0859375
2.048 0.0161458 0.0895833
3.072 0.0140625 0.0822917
4.096 0.0130208 0.0817708
5.12 0.0151042 0.08125
6.144 0.0182292 0.0755208
7.168 0.0208333 0.0723958
8.192 0.0192708 0.0697917
9.216 0.0213542 0.0786458
10.24 0.0260417 0.0765625
11.264 0.0296875 0.0703125
12.288 0.0296875 0.0692708
EOD
$p0_norm_ratio << EOD
# tokens_M main prefix-bidirectional
0 1.13913 1.1602
1.024 1.18183 0.944996
2.048 1.31652 0.969226
3.072 1.37369 0.988288
4.096 1.44091 0.998341
5.12 1.46569 1.01739
6.144 1.46293 1.0274
7.168 1.49441 1.05674
8.192 1.50322 1.05936
9.216 1.51712 1.07462
10.24 1.5233 1.09555
11.264 1.54685 1.0914
12.288 1.55007 1.10514
EOD
$p0_cos << EOD
# tokens_M main prefix-bidirectional
0 0.0560434 0.0614145
1.024 0.173874 0.267989
2.048 0.188441 0.231339
3.072 0.179823 0.22466
4.096 0.18786 0.204428
5.12 0.198481 0.210616
6.144 0.213031 0.210994
7.168 0.21934 0.241801
8.192 0.23075 0.201984
9.216 0.237686 0.203641
10.24 0.248858 0.213436
11.264 0.25618 0.233165
12.288 0.261934 0.236613
EOD
$massive_p0 << EOD
# tokens_M main prefix-bidirectional
0 6.30141 6.04246
1.024 5.90316 4.94584
2.048 7.59369 6.27956
3.072 9.69728 7.32666
4.096 11.3324 9.06562
5.12 12.5355 10.138
6.144 13.6564 11.7419
7.168 13.7557 12.9293
8.192 14.1002 13.4968
9.216 14.3984 14.154
10.24 15.5341 15.676
11.264 15.795 15.9042
12.288 16.2821 16.3928
EOD
$massive_rest << EOD
# tokens_M main prefix-bidirectional
0 6.16198 6.31621
1.024 8.0738 7.67691
2.048 11.1067 10.7772
3.072 13.7668 12.9426
4.096 15.9983 15.2843
5.12 16.8695 15.8185
6.144 18.3841 16.6362
7.168 19.8057 17.6797
8.192 19.5166 17.5344
9.216 19.8847 18.3995
10.24 20.8464 19.2449
11.264 20.8932 18.9923
12.288 22.1172 20.2593
EOD
$heldout_bpb << EOD
# tokens_M main prefix-bidirectional
0 8.01701 8.03126
1.024 3.45649 3.61195
2.048 3.24087 3.53096
3.072 3.08177 3.48043
4.096 3.01236 3.45723
5.12 2.93265 3.43717
6.144 2.88634 3.42711
7.168 2.86513 3.39297
8.192 2.79356 3.39143
9.216 2.78706 3.36102
10.24 2.76019 3.38198
11.264 2.73174 3.38405
12.288 2.73619 3.36025
EOD
set multiplot layout 2,3 title "text task: probes over training (mean over seeds)"
set title "Sink_1 (eps 0.3): fraction of heads sinking on position 0"
set yrange [0.0:1.0]
plot $sink_1 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $sink_1 using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "prefix-bidirectional"
set title "max over blocks of p0_norm_ratio"
set autoscale y
plot $p0_norm_ratio using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $p0_norm_ratio using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "prefix-bidirectional"
set title "p0_cos at the block of the largest ratio"
set yrange [-1.0:1.0]
plot $p0_cos using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $p0_cos using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "prefix-bidirectional"
set title "massive-activation ratio at P0 (max over blocks)"
set autoscale y
plot $massive_p0 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $massive_p0 using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "prefix-bidirectional"
set title "massive-activation ratio away from P0 (max over blocks)"
set autoscale y
plot $massive_rest using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $massive_rest using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "prefix-bidirectional"
set title "held-out bits per byte (probe batch)"
set autoscale y
plot $heldout_bpb using 1:2 with linespoints lw 2 pt 7 ps 0.5 title "main", \
     $heldout_bpb using 1:3 with linespoints lw 2 pt 7 ps 0.5 title "prefix-bidirectional"
unset multiplot
