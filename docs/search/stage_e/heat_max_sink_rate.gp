# p0sim plot: heat_max_sink_rate. Redraw (and restyle) in this directory: gnuplot heat_max_sink_rate.gp
if (!exists("outfile")) outfile = "heat_max_sink_rate.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers >= 1 of sink_rate (mean over seeds)"
set xlabel "lr"
set ylabel "task"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0 0 0.083333333333333343
0 0 0
0 0.16666666666666669 0.16666666666666666
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
