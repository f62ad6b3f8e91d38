# p0sim plot: heat_l1_active_attn_to_0. Redraw (and restyle) in this directory: gnuplot heat_l1_active_attn_to_0.gp
if (!exists("outfile")) outfile = "heat_l1_active_attn_to_0.png"
set terminal pngcairo noenhanced size 960,450 font "sans,10"
set output outfile
set palette rgb 33,13,10
set multiplot layout 1,2 title "max layer-1 head attention from active queries to key 0 (mean over seeds)" font ",13"

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
0.97054279484119876 0.98223543447762429 0.96415573160148671
0.50030463904842715 0.3496744776871375 0.15953058086413408
0.16514479492277279 0.13836925976176517 0.13130731478866089
0.12750244853376871 0.10379998321896701 0.12368792769426327
NaN NaN NaN
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
0.96835689807623615 0.94933905645303851 0.97705257718126803
0.36772680716027323 0.33917629596844134 0.14783853583239071
0.13256950203365306 0.13886100476665456 0.15768024979618217
0.10898471065964102 0.093205182931109534 0.10254071190761639
NaN NaN NaN
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
