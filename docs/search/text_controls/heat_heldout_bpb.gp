# scripts/text_phase.py: heldout_bpb, mean over seeds. Redraw in this directory: gnuplot heat_heldout_bpb.gp
if (!exists("outfile")) outfile = "heat_heldout_bpb.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "held-out bits per byte (probe batch)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
8.01967 8.00672 8.02001 8.02205 8.02041
3.76661 3.76497 3.78002 3.37808 3.96301
3.69534 3.69634 3.73124 3.05531 3.86158
3.64074 3.65827 3.69537 2.89571 3.80302
3.57751 3.63321 3.6621 2.78646 3.77186
3.51479 3.59617 3.63357 2.71525 3.71953
3.43915 3.56047 3.59879 2.66296 3.66356
3.35629 3.4971 3.54132 2.61444 3.5541
3.26827 3.4217 3.48168 2.593 3.42906
3.1846 3.33395 3.41536 2.56715 3.30395
3.09276 3.25872 3.33912 2.54496 3.21671
3.04622 3.17912 3.27165 2.53466 3.14608
2.98672 3.12394 3.21204 2.51214 3.10391
EOD
set xrange [-0.5:4.5]
set yrange [-0.5:12.5]
set xtics ("bos" 0, "document" 1, "main" 2, "rope" 3, "sigmoid" 4)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
