# p0sim plot: heat_max_p0_cos. Redraw (and restyle) in this directory: gnuplot heat_max_p0_cos.gp
if (!exists("outfile")) outfile = "heat_max_p0_cos.png"
set terminal pngcairo noenhanced size 480,710 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max over layers of p0_cos (mean over seeds)"
set xlabel "weight-decay"
set ylabel "task/layers/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.99856201712939818 0.99864449528711885 0.99525186272598731
0.23234778490849903 0.19408893722785164 0.14069752399374233
0.75819512208134121 0.81573871896520667 0.78035831183177484
0.040655116748188704 0.036243698345093792 0.023076675378745293
0.032323041880650667 0.028620236521029616 0.02143019379441639
0.77881234060876248 0.41725531677814076 0.57469245484031228
0.57608223521704505 0.33946074831795592 0.44762568703895311
0.57055750954010587 0.39771141838036217 0.56654543132986956
0.82733033767671327 0.76515440397791623 0.70917692282464095
0.64760670609546855 0.79913185921339691 0.80409488802488371
0.74059325320738789 0.77691994446158241 0.7467535916645508
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
