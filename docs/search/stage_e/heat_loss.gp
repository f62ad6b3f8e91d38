# p0sim plot: heat_loss. Redraw (and restyle) in this directory: gnuplot heat_loss.gp
if (!exists("outfile")) outfile = "heat_loss.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "final probe loss (mean over seeds)"
set xlabel "lr"
set ylabel "task"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
3.7700460751851401 3.7900184790293374 4.1142538388570147
3.8007418314615884 3.8587888081868491 4.1432027816772461
2.9203453858693442 2.9459594090779624 2.9767746130625405
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [2.5:-0.5]
set autoscale cb
set xtics ("1e-3" 0, "3e-3" 1, "1e-2" 2)
set ytics ("firstrecall" 0, "backcopy-indep" 1, "firstrecall-lookup" 2)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
