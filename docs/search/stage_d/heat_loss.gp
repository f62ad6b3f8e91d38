# p0sim plot: heat_loss. Redraw (and restyle) in this directory: gnuplot heat_loss.gp
if (!exists("outfile")) outfile = "heat_loss.png"
set terminal pngcairo noenhanced size 480,710 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "final probe loss (mean over seeds)"
set xlabel "weight-decay"
set ylabel "task/layers/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
3.803635835647583 3.7741455237070718 3.7939501603444419
2.6996790568033853 2.6707861423492432 2.7684878508249917
3.1705665588378906 3.1932663917541504 3.1719823678334556
2.3564751148223877 2.3544685045878091 2.3927859465281167
2.3934637705485025 2.4243083794911704 2.43928591410319
3.8838274478912354 3.9249819119771323 4.0093530019124346
4.0930236180623369 4.080678304036458 4.0873980522155762
4.0941915512084961 4.1090296109517412 4.1021779378255205
2.9826450347900391 2.9519378344217935 3.0475736459096274
2.9879038333892822 2.9344560305277505 3.0261669953664145
3.0378753344217935 3.0228746732076011 3.011970361073812
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [10.5:-0.5]
set autoscale cb
set xtics ("0" 0, "0.1" 1, "0.5" 2)
set ytics ("firstrecall/3/uniform" 0, "firstrecall/3/markov" 1, "lookup/3/uniform" 2, "backcopy/3/uniform" 3, "markov/3/uniform" 4, "backcopy-indep/2/uniform" 5, "backcopy-indep/3/uniform" 6, "backcopy-indep/4/uniform" 7, "firstrecall-lookup/2/uniform" 8, "firstrecall-lookup/3/uniform" 9, "firstrecall-lookup/4/uniform" 10)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
