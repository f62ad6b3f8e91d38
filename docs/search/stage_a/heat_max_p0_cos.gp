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
0.99811846098384283 0.99736336255286107 0.99737180283891458
0.23506434208748345 0.1639713912343036 0.11431407763356036
0.76902686988605484 0.79377638492263114 0.75236895990897068
0.032456748469117593 0.033349658895139293 0.034594461239501981
0.031214032912575407 0.030196655534074156 0.028100650350985346
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
0.99867957003244878 0.99434211864933952 0.99624631934934116
0.25217876712788317 0.21832978684693646 0.1518144285925738
0.77598497257986143 0.78473595582592359 0.74633139918319902
0.051412557649100431 0.035764528353408917 0.029506808442269279
0.033579017466006014 0.039567019348048786 0.031617094949874747
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
