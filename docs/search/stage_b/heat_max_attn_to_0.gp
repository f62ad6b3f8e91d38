# p0sim plot: heat_max_attn_to_0. Redraw (and restyle) in this directory: gnuplot heat_max_attn_to_0.gp
if (!exists("outfile")) outfile = "heat_max_attn_to_0.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers >= 1 of attn_to_0 (mean over seeds)"
set xlabel "seq-len"
set ylabel "d-model"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.13503278316900616 0.11132941367871987 0.07852259986703887
0.13183213406505062 0.11061034505698898 0.12228781769044314
0.32668782378895272 0.16166712545127285 0.1052135923558228
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
