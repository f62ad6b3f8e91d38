# scripts/text_phase.py: sink_1, mean over seeds. Redraw in this directory: gnuplot heat_sink_1.gp
if (!exists("outfile")) outfile = "heat_sink_1.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "Sink_1 (eps 0.3): fraction of heads sinking on position 0"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
0 0
0.01875 0.0859375
0.0161458 0.0895833
0.0140625 0.0822917
0.0130208 0.0817708
0.0151042 0.08125
0.0182292 0.0755208
0.0208333 0.0723958
0.0192708 0.0697917
0.0213542 0.0786458
0.0260417 0.0765625
0.0296875 0.0703125
0.0296875 0.0692708
EOD
set xrange [-0.5:1.5]
set yrange [-0.5:12.5]
set xtics ("main" 0, "prefix-bidirectional" 1)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
set cbrange [0.0:1.0]
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
