# p0sim plot: heat_max_p0_norm_ratio. Redraw (and restyle) in this directory: gnuplot heat_max_p0_norm_ratio.gp
if (!exists("outfile")) outfile = "heat_max_p0_norm_ratio.png"
set terminal pngcairo noenhanced size 480,710 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers of p0_norm_ratio (mean over seeds)"
set xlabel "weight-decay"
set ylabel "task/layers/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.666200445505575 0.76753037755137943 0.74358632211812181
1.0104353742265162 1.0069320075360919 1.0089797568968866
0.84343097019639779 0.87182657322843027 0.86730047915338082
0.97426306818327713 0.97313303138714724 0.9697208033753052
0.98701872595860318 0.98965354478044132 1.0117161548448927
1.7260745122872818 0.89452963643754746 1.397646986239101
1.2651264831015956 1.2996552814839961 1.1795333425918637
0.92235013480677075 0.82227749358726621 1.056451520693072
0.75825855992385705 0.76444961213273865 0.78647752647590263
0.57401594559083879 0.65405100074890532 0.86071815870012547
0.72762799860622385 0.78079171492529009 0.81819593735074569
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [10.5:-0.5]
set autoscale cb
set xtics ("0" 0, "0.1" 1, "0.5" 2)
set ytics ("firstrecall/3/uniform" 0, "firstrecall/3/markov" 1, "lookup/3/uniform" 2, "backcopy/3/uniform" 3, "markov/3/uniform" 4, "backcopy-indep/2/uniform" 5, "backcopy-indep/3/uniform" 6, "backcopy-indep/4/uniform" 7, "firstrecall-lookup/2/uniform" 8, "firstrecall-lookup/3/uniform" 9, "firstrecall-lookup/4/uniform" 10)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
