# p0sim plot: heat_max_attn_to_0. Redraw (and restyle) in this directory: gnuplot heat_max_attn_to_0.gp
if (!exists("outfile")) outfile = "heat_max_attn_to_0.png"
set terminal pngcairo noenhanced size 480,710 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers >= 1 of attn_to_0 (mean over seeds)"
set xlabel "weight-decay"
set ylabel "task/layers/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.1508195054576541 0.24635275688246533 0.12870478024965187
0.14797646257108052 0.13566492550654555 0.13622735319246948
0.13525762665161981 0.13190324069593568 0.12680982078107619
0.12285963321384856 0.12546792432640699 0.1270163497533158
0.13002437972068037 0.12913542558051935 0.1276988791723094
0.046104921319918946 0.072366199887691426 0.074790892746117318
0.12890650948483928 0.1132648735570717 0.13013420341906257
0.15810687596844669 0.14629884724298683 0.1225201167591748
0.25844732350891003 0.30424400863388645 0.19147107523388976
0.33504883690212967 0.28244588647894953 0.32145256260462557
0.35228098036905109 0.25671784501757755 0.15765619695347871
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [10.5:-0.5]
set cbrange [0:1]
set xtics ("0" 0, "0.1" 1, "0.5" 2)
set ytics ("firstrecall/3/uniform" 0, "firstrecall/3/markov" 1, "lookup/3/uniform" 2, "backcopy/3/uniform" 3, "markov/3/uniform" 4, "backcopy-indep/2/uniform" 5, "backcopy-indep/3/uniform" 6, "backcopy-indep/4/uniform" 7, "firstrecall-lookup/2/uniform" 8, "firstrecall-lookup/3/uniform" 9, "firstrecall-lookup/4/uniform" 10)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset output
