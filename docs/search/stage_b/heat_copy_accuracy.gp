# p0sim plot: heat_copy_accuracy. Redraw (and restyle) in this directory: gnuplot heat_copy_accuracy.gp
if (!exists("outfile")) outfile = "heat_copy_accuracy.png"
set terminal pngcairo noenhanced size 480,360 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "task accuracy at active queries (mean over seeds)"
set xlabel "seq-len"
set ylabel "d-model"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.97920929889571007 0.94611528822055146 0.29171122005915434
0.99821746880570406 0.99175891566327945 0.30658413984296012
0.98731220470350911 0.98357369614512469 0.081886396431850972
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
