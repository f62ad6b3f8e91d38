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
1 1 0.98619329388560162
0.84425457122086334 0.87534809245335554 0.7750245779113869
0.9714601896113082 0.9716830927357244 0.9672430401842167
0.69531115454021319 0.6800102249488752 0.74674247808576166
NaN NaN NaN
0.76258610954263129 0.54047314966855198 0.43314433644622319
0.099125002014267924 0.11526865403861909 0.12976101481244162
0.092017887967116394 0.059934074639956987 0.059930809930809924
0.85701080810197183 0.80261940393897535 0.72823152310949357
0.7592594891316341 0.83279361988222744 0.69641649523785698
0.58125697358433936 0.62707096712674915 0.64335882628375218
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
