# scripts/text_phase.py: p0_cos, mean over seeds. Redraw in this directory: gnuplot heat_p0_cos.gp
if (!exists("outfile")) outfile = "heat_p0_cos.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "p0_cos at the block of the largest ratio"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
1 0.0669677 0.0608943 0.0620641 0.0400723
1 0.221364 0.264325 0.301612 0.523344
1 0.274811 0.240926 0.345567 0.438949
1 0.287801 0.234246 0.334197 0.434892
1 0.33938 0.24194 0.341441 0.437458
1 0.422505 0.246839 0.343267 0.432998
1 0.559004 0.375317 0.337464 0.561484
1 0.692325 0.588713 0.353528 0.612283
1 0.753462 0.798952 0.392921 0.527214
1 0.766445 0.821083 0.395542 0.498436
1 0.755422 0.837164 0.406401 0.515518
1 0.733821 0.847745 0.42675 0.519568
1 0.734553 0.842952 0.467254 0.591932
EOD
set xrange [-0.5:4.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "document" 1, "main" 2, "rope" 3, "sigmoid" 4)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
set cbrange [-1.0:1.0]
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
