# p0sim plot: heat_task_accuracy. Redraw (and restyle) in this directory: gnuplot heat_task_accuracy.gp
if (!exists("outfile")) outfile = "heat_task_accuracy.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "task accuracy at active queries (mean over seeds)"
set xlabel "seq-len"
set ylabel "d-model"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.96213151927437635 0.83845863510935281 0.1311470572453369
1 0.9990108803165183 0.43919965323079946
1 0.98671853816681399 0.029351961170142989
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [2.5:-0.5]
set cbrange [0:1]
set xtics ("32" 0, "64" 1, "128" 2)
set ytics ("32" 0, "64" 1, "128" 2)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
