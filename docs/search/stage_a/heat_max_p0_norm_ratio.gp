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
0.65847587175742972 0.60918642259126732 0.64203979872245476
0.97823987162635084 1.0183555282168453 1.0168088332118392
0.84292058313217577 0.8749363038626401 0.87705344275903097
0.97792340158975033 0.95063343803472511 0.97334642040576702
0.98418918521661924 1.0026168294237947 0.99498103225929901
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
0.88802664913506557 0.78182839014304839 0.77190394375687155
0.98290146489520258 0.98508252372079741 1.0401616891501726
0.84306035432991822 0.89701668813450808 0.90056685883270593
0.97435781279106537 0.97438990970680639 0.94256587930262514
0.99809661076972389 1.0067513134191592 1.0075444984213069
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
