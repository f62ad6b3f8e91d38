# p0sim plot: heat_max_p0_cos. Redraw (and restyle) in this directory: gnuplot heat_max_p0_cos.gp
if (!exists("outfile")) outfile = "heat_max_p0_cos.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers of p0_cos (mean over seeds)"
set xlabel "lr"
set ylabel "task"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.65850359298866823 0.98755517809942595 0.76615606366527123
0.94134120777598729 0.88775809621948076 0.96320702575531336
0.78355627367929559 0.7902859341693057 0.73435611734379724
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
