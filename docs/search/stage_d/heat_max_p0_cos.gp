# p0sim plot: heat_max_p0_cos. Redraw (and restyle) in this directory: gnuplot heat_max_p0_cos.gp
if (!exists("outfile")) outfile = "heat_max_p0_cos.png"
set terminal pngcairo noenhanced size 480,710 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers of p0_cos (mean over seeds)"
set xlabel "weight-decay"
set ylabel "task/layers/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.99860621707587183 0.99879949818745384 0.99490927768651838
0.2324902901959898 0.19691787488859949 0.14036730162445923
0.76066048460298197 0.79630933622812539 0.74133960554824629
0.040655096151181395 0.036243631219817544 0.023076668197306062
0.032323045012101516 0.028620229117803587 0.02143018860520236
0.79937830501214102 0.63157338754895276 0.55987442883684213
0.1710252227608717 0.26439186508595702 0.67400924648653526
0.48308290325968922 0.38039754970162126 0.59365015802113497
0.79378932075350106 0.75121603926075409 0.7102846310147547
0.70534716700287925 0.82632500701274503 0.74224286314223731
0.75713823635879218 0.7919708844330271 0.75186284143726556
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [10.5:-0.5]
set cbrange [0:1]
set xtics ("0" 0, "0.1" 1, "0.5" 2)
set ytics ("firstrecall/3/uniform" 0, "firstrecall/3/markov" 1, "lookup/3/uniform" 2, "backcopy/3/uniform" 3, "markov/3/uniform" 4, "backcopy-indep/2/uniform" 5, "backcopy-indep/3/uniform" 6, "backcopy-indep/4/uniform" 7, "firstrecall-lookup/2/uniform" 8, "firstrecall-lookup/3/uniform" 9, "firstrecall-lookup/4/uniform" 10)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
