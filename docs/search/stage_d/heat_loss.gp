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
3.8048668702443442 3.7768549919128418 3.7939213116963706
2.699701944986979 2.6714428265889487 2.7689859072367349
3.1751588980356851 3.2011670271555581 3.1767664750417075
2.3564751148223877 2.3544685840606689 2.3927857875823975
2.3934636910756431 2.4243083794911704 2.43928591410319
3.8981133302052817 3.9812184174855552 3.9997560977935791
4.0944196383158369 4.0752992630004883 4.1039759318033857
4.1067447662353516 4.0899254480997724 4.1108066240946455
2.9813369115193686 2.951106627782186 3.0337193012237549
3.0233655770619712 2.9416224956512451 3.0019804636637368
3.0420805613199868 2.992788871129354 3.0249339739481607
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
