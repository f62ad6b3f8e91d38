# p0sim plot: heat_l1_active_attn_to_0. Redraw (and restyle) in this directory: gnuplot heat_l1_active_attn_to_0.gp
if (!exists("outfile")) outfile = "heat_l1_active_attn_to_0.png"
set terminal pngcairo noenhanced size 480,710 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max layer-1 head attention from active queries to key 0 (mean over seeds)"
set xlabel "weight-decay"
set ylabel "task/layers/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.98184479824973137 0.98053869195478971 0.97309695928890605
0.3815360776856288 0.25102799274727328 0.15804345600243069
0.15700992777748535 0.17310337343174104 0.1284015818155492
0.10909400134082725 0.097489156788411482 0.10935765261466807
NaN NaN NaN
0.040888452566268559 0.055356029994428013 0.059663966270841265
0.093169947500374425 0.12052748703331245 0.1195866229597625
0.14587398743411342 0.14756691158496929 0.10792037830783277
0.74171146939137145 0.76079000465046853 0.66236606796829356
0.46420824100965352 0.48960644400915443 0.5981026904254646
0.34760154341918131 0.42299296002589054 0.45445284144635262
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
