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
0.15755018478743027 0.24426980104560275 0.1593330039136788
0.14275331014087778 0.13358098690869835 0.130675760436089
0.12751765999323122 0.12557984287725854 0.12533582989609018
0.12575462836298731 0.13002380298974053 0.12532443925103889
0.12917621163311802 0.12902336070662082 0.12796487574845136
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
0.14979678569725721 0.19973239109195154 0.14533382159922911
0.17560937949259961 0.12900262295999401 0.12977999103449395
0.13189721863289389 0.1318143816509845 0.12650328283987305
0.12738069875362104 0.12509718135296818 0.12738801629399002
0.12944861529657223 0.12859140567866234 0.12748907825349912
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
