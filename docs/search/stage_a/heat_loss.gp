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
3.8002215226491294 3.7924647331237793 3.7862486839294434
2.6874459584554038 2.749539852142334 2.8297545909881592
3.1774221261342368 3.166313330332438 3.20216433207194
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
3.8118848005930581 3.7797819773356118 3.7715211709340415
2.6617414951324463 2.6867291927337646 2.769573450088501
3.1529039541880288 3.1851181983947754 3.1744214693705239
2.3239185015360513 2.3132568200429282 2.3883411884307861
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
