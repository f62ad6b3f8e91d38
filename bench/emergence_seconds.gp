set terminal pngcairo noenhanced size 720,480 font "sans,10"
set output "bench/emergence_seconds.png"
set title "p0sim: seconds to identification emergence (firstrecall, B=64, median of 3 seeds, 1 thread)"
set xlabel "T (sequence length)"
set ylabel "seconds (wall; dashed: process CPU)"
set logscale xy
set xtics (16, 32, 64)
set grid
set key top left
plot for [i=0:2] "bench/emergence_seconds.dat" index i using 2:3 with linespoints lw 2 pt 7 lc i+1 title sprintf("d=%d", word("32 64 128", i+1)+0) , \
     for [i=0:2] "bench/emergence_seconds.dat" index i using 2:4 with lines dt 2 lc i+1 notitle
