# p0sim plot: heat_loss. Redraw (and restyle) in this directory: gnuplot heat_loss.gp
if (!exists("outfile")) outfile = "heat_loss.png"
set terminal pngcairo noenhanced size 960,450 font "sans,10"
set output outfile
set palette rgb 33,13,10
set multiplot layout 1,2 title "final probe loss (mean over seeds)" font ",13"

# panel 0
set title "layers = 2"
set xlabel "weight-decay"
set ylabel "task/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
3.7962696552276611 3.7948339780171714 3.774858077367147
2.6872942447662354 2.7495511372884116 2.8297545909881592
3.1774126688639321 3.1627106666564941 3.2083254655202231
2.3740506966908774 2.367751439412435 2.3836026191711426
2.4527763525644937 2.4497652053833008 2.4468845526377359
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [4.5:-0.5]
set autoscale cb
set xtics ("0" 0, "0.1" 1, "0.5" 2)
set ytics ("firstrecall/uniform" 0, "firstrecall/markov" 1, "lookup/uniform" 2, "backcopy/uniform" 3, "markov/uniform" 4)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq

# panel 1
set title "layers = 4"
set xlabel "weight-decay"
set ylabel "task/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p1 << EOD
3.8108222484588623 3.7865631580352783 3.7703244686126709
2.6614375114440918 2.6854709784189859 2.7696006298065186
3.1550519466400146 3.1905618508656821 3.1765824158986411
2.3239204883575439 2.3132557074228921 2.3883415857950845
2.4239891370137534 2.4296377499898276 2.4407656192779541
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [4.5:-0.5]
set autoscale cb
set xtics ("0" 0, "0.1" 1, "0.5" 2)
set ytics ("firstrecall/uniform" 0, "firstrecall/markov" 1, "lookup/uniform" 2, "backcopy/uniform" 3, "markov/uniform" 4)
plot $p1 matrix with image notitle, \
     $p1 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset multiplot
unset output
