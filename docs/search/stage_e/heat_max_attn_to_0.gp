# p0sim plot: heat_max_attn_to_0. Redraw (and restyle) in this directory: gnuplot heat_max_attn_to_0.gp
if (!exists("outfile")) outfile = "heat_max_attn_to_0.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers >= 1 of attn_to_0 (mean over seeds)"
set xlabel "lr"
set ylabel "task"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.1310060364005638 0.1358549038885474 0.173169541502293
0.057830180429954713 0.14474919241668976 0.12762839360792663
0.14433727082950182 0.2355655497433552 0.25387373839438071
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [2.5:-0.5]
set cbrange [0:1]
set xtics ("1e-3" 0, "3e-3" 1, "1e-2" 2)
set ytics ("firstrecall" 0, "backcopy-indep" 1, "firstrecall-lookup" 2)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
