# p0sim plot: heat_max_p0_norm_ratio. Redraw (and restyle) in this directory: gnuplot heat_max_p0_norm_ratio.gp
if (!exists("outfile")) outfile = "heat_max_p0_norm_ratio.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers of p0_norm_ratio (mean over seeds)"
set xlabel "seq-len"
set ylabel "d-model"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.68328953946621662 0.48594258704525117 0.69832035996572117
0.62422519799948051 0.62737763355618803 0.60585808512091144
0.67165098025716441 0.46856363525407063 0.92528156310163434
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
