# p0sim plot: heat_max_p0_norm_ratio. Redraw (and restyle) in this directory: gnuplot heat_max_p0_norm_ratio.gp
if (!exists("outfile")) outfile = "heat_max_p0_norm_ratio.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers of p0_norm_ratio (mean over seeds)"
set xlabel "lr"
set ylabel "task"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.65444443022525567 0.73384362104034184 0.93480524391799202
2.36812982437994 1.5603387737002903 1.0364410598203027
0.77574629711975096 0.90064699360501288 0.96649620217987353
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [2.5:-0.5]
set autoscale cb
set xtics ("1e-3" 0, "3e-3" 1, "1e-2" 2)
set ytics ("firstrecall" 0, "backcopy-indep" 1, "firstrecall-lookup" 2)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
