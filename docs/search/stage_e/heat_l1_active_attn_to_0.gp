# p0sim plot: heat_l1_active_attn_to_0. Redraw (and restyle) in this directory: gnuplot heat_l1_active_attn_to_0.gp
if (!exists("outfile")) outfile = "heat_l1_active_attn_to_0.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max layer-1 head attention from active queries to key 0 (mean over seeds)"
set xlabel "lr"
set ylabel "task"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.8994764786298094 0.97336868020208878 0.12030079913890536
0.032551235161386492 0.1512866886445465 0.109791238909187
0.85057206074744263 0.61642885635665456 0.49351570269251926
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
