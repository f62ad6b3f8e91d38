# scripts/text_phase.py: p0_cos, mean over seeds. Redraw in this directory: gnuplot heat_p0_cos.gp
if (!exists("outfile")) outfile = "heat_p0_cos.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "p0_cos at the block of the largest ratio"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
0.0560434 0.0614145
0.173874 0.267989
0.188441 0.231339
0.179823 0.22466
0.18786 0.204428
0.198481 0.210616
0.213031 0.210994
0.21934 0.241801
0.23075 0.201984
0.237686 0.203641
0.248858 0.213436
0.25618 0.233165
0.261934 0.236613
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("main" 0, "prefix-bidirectional" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
set cbrange [-1.0:1.0]
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
