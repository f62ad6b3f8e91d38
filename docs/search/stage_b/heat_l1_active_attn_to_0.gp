# p0sim plot: heat_l1_active_attn_to_0. Redraw (and restyle) in this directory: gnuplot heat_l1_active_attn_to_0.gp
if (!exists("outfile")) outfile = "heat_l1_active_attn_to_0.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max layer-1 head attention from active queries to key 0 (mean over seeds)"
set xlabel "seq-len"
set ylabel "d-model"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.93785638111069469 0.86664336098280237 0.4474250387744409
0.96488775953374029 0.96782453286165171 0.66539355055909699
0.98309582331243883 0.9627437897769654 0.098125365393202726
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
