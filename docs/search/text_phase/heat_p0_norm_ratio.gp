# scripts/text_phase.py: p0_norm_ratio, mean over seeds. Redraw in this directory: gnuplot heat_p0_norm_ratio.gp
if (!exists("outfile")) outfile = "heat_p0_norm_ratio.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "max over blocks of p0_norm_ratio"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
1.12823 1.15415 1.18631 1.17606 1.16866 1.18049 1.17267
1.25797 1.18116 1.09459 0.966794 0.928492 0.932974 0.897977
1.39707 1.40472 1.23956 1.01341 0.866438 0.841349 0.872928
1.42862 1.43814 1.37075 1.11069 0.927733 0.80699 0.752783
1.47359 1.515 1.44084 1.201 0.994341 0.780792 0.714867
1.48407 1.54342 1.50056 1.39011 1.05905 0.798593 0.702631
1.50847 1.57849 1.51874 1.49663 1.11513 0.793073 0.695663
1.52318 1.59 1.52953 1.55322 1.30979 0.847436 0.679301
1.5267 1.60895 1.53644 1.52867 1.49673 0.871788 0.701368
1.53643 1.62221 1.53094 1.54048 1.73396 0.930054 0.705696
1.54814 1.60518 1.54121 1.5583 1.6888 0.997531 0.695406
1.55226 1.63391 1.54398 1.5508 1.67671 1.08795 0.727378
1.56382 1.64327 1.55829 1.53645 1.70614 1.1748 0.733624
EOD
set xrange [-0.5:6.5]
set yrange [-0.5:12.5]
set xtics ("T16" 0, "T32" 1, "T64" 2, "T128" 3, "T256" 4, "T512" 5, "T1024" 6)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
