# p0sim plot: heat_task_accuracy. Redraw (and restyle) in this directory: gnuplot heat_task_accuracy.gp
if (!exists("outfile")) outfile = "heat_task_accuracy.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "task accuracy at active queries (mean over seeds)"
set xlabel "lr"
set ylabel "task"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.99818840579710144 0.99811676082862533 0.047365815012873839
0.96477027770412105 0.65429183845647043 0.025774849702520013
0.99637681159420288 0.96105673268846925 0.85336515520018241
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [2.5:-0.5]
set cbrange [0:1]
set xtics ("1e-3" 0, "3e-3" 1, "1e-2" 2)
set ytics ("firstrecall" 0, "backcopy-indep" 1, "firstrecall-lookup" 2)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
