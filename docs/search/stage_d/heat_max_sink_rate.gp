# p0sim plot: heat_max_sink_rate. Redraw (and restyle) in this directory: gnuplot heat_max_sink_rate.gp
if (!exists("outfile")) outfile = "heat_max_sink_rate.png"
set terminal pngcairo noenhanced size 480,710 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers >= 1 of sink_rate (mean over seeds)"
set xlabel "weight-decay"
set ylabel "task/layers/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.083333333333333343 0 0
0 0 0
0 0 0
0 0 0
0 0 0
0 0 0
0 0 0
0 0 0
0.41666666666666669 0.33333333333333337 0.33333333333333331
0.58333333333333337 0.33333333333333337 0.16666666666666666
0.33333333333333331 0.5 0.083333333333333329
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
