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
0.66941834527343458 0.73043035898433906 0.69869185156519675
1.0104311449026691 1.0090272337468444 1.0096915383276046
0.86682517926767499 0.85843911399430739 0.90118449268961121
0.97426300534397992 0.97313304022249103 0.96972077588200967
0.98701873481407232 0.98965357104440244 1.0117161553625871
1.7318309089015491 1.3052808714183477 1.5143628602356916
1.0364456384940843 1.1456750847355652 1.4086918999583666
1.1821994975922594 1.0641010153723927 1.0488982081000826
0.81652226549047913 0.85978697091329326 0.76816742756148426
0.68806821876874613 0.68896319163865893 0.82923642962935196
0.69581049666562445 0.76379003984813054 0.7145498219771782
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
