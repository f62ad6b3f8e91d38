# scripts/text_phase.py: massive_p0, mean over seeds. Redraw in this directory: gnuplot heat_massive_p0.gp
if (!exists("outfile")) outfile = "heat_massive_p0.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "massive-activation ratio at P0 (max over blocks)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
5.13946 6.34507 6.30945 6.34373 0.868738
3.35487 3.91563 4.51065 5.34577 0.38912
4.03579 5.30704 5.49051 7.33392 0.740551
5.14527 7.31325 6.28194 8.9099 1.14793
6.53363 8.33517 6.63555 11.2371 1.54019
8.06772 9.0059 6.9951 12.745 2.22309
9.03656 10.5749 7.75087 13.6775 3.10889
10.7451 13.195 9.45458 15.7153 5.31839
11.8638 14.5747 11.9575 16.4761 7.51518
12.5124 17.2008 13.5245 16.775 9.33338
12.8862 18.9047 14.9641 17.5194 11.3531
13.5962 20.4017 17.3861 18.0715 12.3275
14.6579 21.0758 18.4226 18.3202 13.49
EOD
set xrange [-0.5:4.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "document" 1, "main" 2, "rope" 3, "sigmoid" 4)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
