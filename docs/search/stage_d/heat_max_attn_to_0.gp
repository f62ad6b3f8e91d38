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
0.158288709393234 0.13231708634437908 0.13142798685517026
0.1479874218416293 0.13638705926967282 0.13609481083494485
0.13533491150032767 0.13337467673358891 0.1371430588380872
0.12285962424361553 0.12546783297372052 0.12701634521796284
0.13002438127174779 0.12913542716372226 0.1276988791309274
0.042418148894967839 0.075402428975462579 0.072298557717258752
0.12473016898822874 0.12215057432922463 0.12242549018242464
0.13954736024661599 0.13588492968340141 0.13089544071947765
0.30669236106144565 0.33364898959283007 0.23780331791522477
0.32149036649189044 0.26552879908997762 0.18395298955661726
0.26570692561702564 0.31208422815422338 0.17749686620112026
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
