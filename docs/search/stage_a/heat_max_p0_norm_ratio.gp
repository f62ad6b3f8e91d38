# p0sim plot: heat_max_p0_norm_ratio. Redraw (and restyle) in this directory: gnuplot heat_max_p0_norm_ratio.gp
if (!exists("outfile")) outfile = "heat_max_p0_norm_ratio.png"
set terminal pngcairo noenhanced size 960,450 font "sans,10"
set output outfile
set palette rgb 33,13,10
set multiplot layout 1,2 title "max over layers of p0_norm_ratio (mean over seeds)" font ",13"

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
0.57799147782109039 0.58540470962391167 0.6076730118972522
0.97383202921775236 1.0183324045533024 1.0168088321860078
0.87033212369034008 0.87964838357941899 0.89778159162503512
0.97792342346608463 0.95063355925806381 0.97334639886872198
0.98418919010494532 1.0026167947537719 0.99498104955279831
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
0.87010185196214351 0.76343709391852643 0.75402688959864905
0.96719729627531581 0.98989247286504167 1.0400647924989506
0.85779187916133548 0.95168244176048811 0.8753862250115374
0.97435888932571491 0.97439098222851872 0.94256590380684147
0.99809659080589319 1.0067512919552755 1.0075445215431382
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
