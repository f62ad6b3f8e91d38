# p0sim plot: heat_max_p0_cos. Redraw (and restyle) in this directory: gnuplot heat_max_p0_cos.gp
if (!exists("outfile")) outfile = "heat_max_p0_cos.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers of p0_cos (mean over seeds)"
set xlabel "seq-len"
set ylabel "d-model"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.72701938137434852 0.27494005299551261 0.28247453685106932
0.99795792112826542 0.99559688238747224 0.4141889001043107
0.99833102345597979 0.99388624515676716 0.40365622530521417
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [2.5:-0.5]
set cbrange [0:1]
set xtics ("32" 0, "64" 1, "128" 2)
set ytics ("32" 0, "64" 1, "128" 2)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
