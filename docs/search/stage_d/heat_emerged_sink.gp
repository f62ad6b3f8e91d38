# p0sim plot: heat_emerged_sink. Redraw (and restyle) in this directory: gnuplot heat_emerged_sink.gp
if (!exists("outfile")) outfile = "heat_emerged_sink.png"
set terminal pngcairo noenhanced size 480,710 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "fraction of seeds where the sink emerged (mean over seeds)"
set xlabel "weight-decay"
set ylabel "task/layers/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.33333333333333337 0 0
0 0 0
0 0 0
0 0 0
0 0 0
0 0 0
0 0 0
0 0 0
1 0.66666666666666674 0.66666666666666663
1 0.66666666666666674 0.66666666666666663
1 1 0.33333333333333331
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
