# p0sim plot: heat_loss. Redraw (and restyle) in this directory: gnuplot heat_loss.gp
if (!exists("outfile")) outfile = "heat_loss.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "final probe loss (mean over seeds)"
set xlabel "seq-len"
set ylabel "d-model"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
3.8150050640106201 3.8342872460683188 4.0672155221303301
3.7995909055074057 3.8145686785380044 3.9626056353251138
3.8121755123138428 3.7819894949595132 4.1534113883972168
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [2.5:-0.5]
set autoscale cb
set xtics ("32" 0, "64" 1, "128" 2)
set ytics ("32" 0, "64" 1, "128" 2)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
