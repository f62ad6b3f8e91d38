# p0sim plot: heat_emerged_identification. Redraw (and restyle) in this directory: gnuplot heat_emerged_identification.gp
if (!exists("outfile")) outfile = "heat_emerged_identification.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "fraction of seeds where identification emerged (mean over seeds)"
set xlabel "seq-len"
set ylabel "task"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
1 0.33333333333333331
1 0.33333333333333337
EOD
unset grid
set xrange [-0.5:1.5]
set yrange [1.5:-0.5]
set cbrange [0:1]
set xtics ("128" 0, "256" 1)
set ytics ("firstrecall" 0, "firstrecall-lookup" 1)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
