# scripts/text_phase.py: heldout_bpb, mean over seeds. Redraw in this directory: gnuplot heat_heldout_bpb.gp
if (!exists("outfile")) outfile = "heat_heldout_bpb.png"
set terminal pngcairo noenhanced size 640,480 font "sans,10"
set output outfile
set palette rgb 33,13,10
set title "held-out bits per byte (probe batch)"
set xlabel "variant (T = context length in bytes)"
set ylabel "training tokens (millions)"
$d << EOD
8.01426 8.01686 8.01485 8.01242 8.00639 8.02552 8.01674
3.56902 3.57108 3.67723 3.79888 3.75806 3.79753 3.82394
3.36001 3.37602 3.55977 3.72275 3.69825 3.76277 3.79958
3.21955 3.20987 3.41032 3.67008 3.66325 3.73812 3.77914
3.1571 3.11226 3.26552 3.60862 3.62281 3.72214 3.76919
3.0985 3.02571 3.17596 3.51736 3.60405 3.70829 3.76218
3.07461 2.97783 3.10748 3.40495 3.56803 3.69734 3.75182
3.01592 2.92761 3.04359 3.3105 3.53113 3.68887 3.75149
2.99746 2.90279 2.99999 3.22762 3.46201 3.67999 3.74746
2.95918 2.88523 2.97134 3.17663 3.3746 3.66741 3.73835
2.94859 2.85725 2.94051 3.11949 3.29491 3.65648 3.73305
2.93024 2.84001 2.91033 3.08708 3.22296 3.65081 3.72839
2.92826 2.82658 2.87041 3.05277 3.14175 3.62686 3.73013
EOD
set xrange [-0.5:6.5]
set yrange [-0.5:12.5]
set xtics ("T16" 0, "T32" 1, "T64" 2, "T128" 3, "T256" 4, "T512" 5, "T1024" 6)
set ytics ("0.0" 0, "2.0" 2, "4.1" 4, "6.1" 6, "8.2" 8, "10.2" 10, "12.3" 12)
plot $d matrix with image notitle, \
     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle
