# scripts/text_phase.py: sink_1, mean over seeds. Redraw in this directory: gnuplot heat_sink_1.gp
if (!exists("outfile")) outfile = "heat_sink_1.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "Sink_1 (eps 0.3): fraction of heads sinking on position 0"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
0 0 0 0 0
0 0 0 0 0.00416667
0 0.000520833 0 0 0.00208333
0.000520833 0.00208333 0 0 0.0015625
0 0.00104167 0 0 0.00208333
0 0.000520833 0 0 0.00416667
0 0 0 0 0.00364583
0 0 0 0 0.00625
0 0 0 0 0.0135417
0 0 0 0 0.0130208
0 0 0 0 0.01875
0 0 0 0 0.021875
0 0 0 0 0.03125
EOD
set xrange [-0.5:4.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "document" 1, "main" 2, "rope" 3, "sigmoid" 4)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
set cbrange [0.0:1.0]
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
