# p0sim plot: heat_l1_active_attn_to_0. Redraw (and restyle) in this directory: gnuplot heat_l1_active_attn_to_0.gp
if (!exists("outfile")) outfile = "heat_l1_active_attn_to_0.png"
set terminal pngcairo noenhanced size 480,710 font "sans,10"
set output outfile
set palette rgb 33,13,10

# panel 0
set title "max layer-1 head attention from active queries to key 0 (mean over seeds)"
set xlabel "weight-decay"
set ylabel "task/layers/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.96857383236662487 0.97733755138749745 0.95350500375911396
0.38162663191945612 0.25677171446990321 0.15894925656969328
0.14019138984995944 0.13020382568078062 0.1285231132811693
0.10909423542095015 0.097488732067058367 0.10935760560335193
NaN NaN NaN
0.037310978608684438 0.058380169204791402 0.053805338845402437
0.15946987703884291 0.15118683119790877 0.10844993503664789
0.14608826885407503 0.12795339899094554 0.14079803699572208
0.57246343335170169 0.68687059244375215 0.59926882566829554
0.65895499781335565 0.59908528379409753 0.48528818679397706
0.3135087194901871 0.43602813560174175 0.44195891474186599
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
