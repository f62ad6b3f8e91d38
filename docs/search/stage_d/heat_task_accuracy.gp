# p0sim plot: heat_task_accuracy. Redraw (and restyle) in this directory: gnuplot heat_task_accuracy.gp
if (!exists("outfile")) outfile = "heat_task_accuracy.png"
set terminal pngcairo noenhanced size 480,710 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "task accuracy at active queries (mean over seeds)"
set xlabel "weight-decay"
set ylabel "task/layers/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.99619047619047618 0.98844884488448848 0.99013806706114393
0.84425457122086334 0.8755891201066639 0.7695676893446759
0.95891194064473928 0.9503951457898826 0.96645010762657813
0.69531115454021319 0.6800102249488752 0.74674247808576166
NaN NaN NaN
0.7052272727272727 0.43282855926534086 0.41708754208754206
0.086583018915702317 0.15084150957263073 0.087503366464003696
0.082644048601850095 0.08687599618972168 0.043596925949867124
0.86087310251707116 0.84687179382763389 0.71541158210233347
0.65146750524109009 0.75953126393243242 0.76500413721808036
0.62833474188972915 0.75258051443419394 0.57443830037087418
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
