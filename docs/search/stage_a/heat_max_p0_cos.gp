# p0sim plot: heat_max_p0_cos. Redraw (and restyle) in this directory: gnuplot heat_max_p0_cos.gp
if (!exists("outfile")) outfile = "heat_max_p0_cos.png"
set terminal pngcairo noenhanced size 960,450 font "sans,10"
set output outfile
set palette rgb 33,13,10
set multiplot layout 1,2 title "max over layers of p0_cos (mean over seeds)" font ",13"

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
0.99775193961549657 0.99478035801906495 0.98489636180122175
0.23108200119827582 0.16400514925893778 0.11431404732888066
0.76422600178490518 0.77757399440785047 0.77374181007478937
0.032456752879399337 0.033349623788566617 0.034594433498539454
0.03121403323353034 0.030196664995197593 0.028100647467758925
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [4.5:-0.5]
set cbrange [0:1]
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
0.99737101328283517 0.99839688808894889 0.99487040254863479
0.24742496925933494 0.21930637066291828 0.15192872661263535
0.78176049848270723 0.79554290775040404 0.70515271684296987
0.051412696202350859 0.035764075514520224 0.029506821717174187
0.03357901798877394 0.0395670207402114 0.03161708911962164
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [4.5:-0.5]
set cbrange [0:1]
set xtics ("0" 0, "0.1" 1, "0.5" 2)
set ytics ("firstrecall/uniform" 0, "firstrecall/markov" 1, "lookup/uniform" 2, "backcopy/uniform" 3, "markov/uniform" 4)
plot $p1 matrix with image notitle, \
     $p1 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset multiplot
unset output
