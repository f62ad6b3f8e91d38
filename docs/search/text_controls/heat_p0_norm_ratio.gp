# scripts/text_phase.py: p0_norm_ratio, mean over seeds. Redraw in this directory: gnuplot heat_p0_norm_ratio.gp
if (!exists("outfile")) outfile = "heat_p0_norm_ratio.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "max over blocks of p0_norm_ratio"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
1.19437 1.18694 1.18705 1.18398 0.140073
0.856595 0.811929 0.916783 1.01057 0.0420043
0.903893 0.881665 0.86247 1.0497 0.0750001
1.06428 0.978732 0.90776 1.06113 0.107745
1.24776 1.07492 0.978382 1.084 0.164904
1.32638 1.16539 1.03812 1.09055 0.230002
1.4299 1.29642 1.16288 1.09448 0.34975
1.5366 1.44928 1.33458 1.11443 0.588841
1.66463 1.59441 1.51453 1.14814 0.84686
1.65707 1.70755 1.58304 1.14509 1.00059
1.64646 1.75213 1.64105 1.14078 1.06946
1.61406 1.73841 1.63825 1.14615 1.12312
1.64167 1.68817 1.63429 1.14667 1.12482
EOD
set xrange [-0.5:4.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "document" 1, "main" 2, "rope" 3, "sigmoid" 4)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
