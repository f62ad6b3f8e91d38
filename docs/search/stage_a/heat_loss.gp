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
3.7959530353546143 3.7946785291035972 3.7761378288269043
2.6875332991282144 2.7495337327321372 2.829754670461019
3.1800510883331299 3.1651951471964517 3.2007816632588706
2.3740506966908774 2.3677513599395752 2.3836025396982827
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
3.8081816037495932 3.7842189470926919 3.7760459582010903
2.6624143123626709 2.6864294211069741 2.7695639928181968
3.1540610790252686 3.1865740617116294 3.1811483701070151
2.3239209651947021 2.3132567405700684 2.3883413473765054
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
