# p0sim plot: heat_max_attn_to_0. Redraw (and restyle) in this directory: gnuplot heat_max_attn_to_0.gp
if (!exists("outfile")) outfile = "heat_max_attn_to_0.png"
set terminal pngcairo noenhanced size 960,450 font "sans,10"
set output outfile
set palette rgb 33,13,10
set multiplot layout 1,2 title "max over layers >= 1 of attn_to_0 (mean over seeds)" font ",13"

# panel 0
set title "layers = 2"
set xlabel "weight-decay"
set ylabel "task/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p0 << EOD
0.18013151468081992 0.13016630340292495 0.12962117367230716
0.14232521017753547 0.13358018241416894 0.13067575229099102
0.12905133837313124 0.13526032445731126 0.12630597468517243
0.12575466352961934 0.1300237938265246 0.1253244384031007
0.1291762105804537 0.12902335834837686 0.1279648746260591
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [4.5:-0.5]
set cbrange [0:1]
set xtics ("0" 0, "0.1" 1, "0.5" 2)
set ytics ("firstrecall/uniform" 0, "firstrecall/markov" 1, "lookup/uniform" 2, "backcopy/uniform" 3, "markov/uniform" 4)
plot $p0 matrix with image notitle, \
     $p0 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq

# panel 1
set title "layers = 4"
set xlabel "weight-decay"
set ylabel "task/filler"
unset logscale
set autoscale
set xtics autofreq norotate
set ytics autofreq
set grid
$p1 << EOD
0.15259134736107632 0.1580560633374905 0.13882555353930254
0.17168425824703865 0.13082654320344572 0.12978225987046596
0.13215794792027041 0.14189343712302604 0.13441278751457575
0.127379830475741 0.1250976902479245 0.12738801033546421
0.129448611777813 0.12859140108647202 0.12748907819498831
EOD
unset grid
set xrange [-0.5:2.5]
set yrange [4.5:-0.5]
set cbrange [0:1]
set xtics ("0" 0, "0.1" 1, "0.5" 2)
set ytics ("firstrecall/uniform" 0, "firstrecall/markov" 1, "lookup/uniform" 2, "backcopy/uniform" 3, "markov/uniform" 4)
plot $p1 matrix with image notitle, \
     $p1 matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",9" notitle
set autoscale
set xtics autofreq
set ytics autofreq
unset multiplot
unset output
