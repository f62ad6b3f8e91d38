# p0sim plot: heat_l1_active_attn_to_0. Redraw (and restyle) in this directory: gnuplot heat_l1_active_attn_to_0.gp
if (!exists("outfile")) outfile = "heat_l1_active_attn_to_0.png"
set terminal pngcairo noenhanced size 960,450 font "sans,10"
set output outfile
set palette rgb 33,13,10
set multiplot layout 1,2 title "max layer-1 head attention from active queries to key 0 (mean over seeds)" font ",13"

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
0.9573762284980265 0.97362741672811248 0.96176389025756204
0.49065517238662293 0.34959799311886103 0.15953087820765804
0.14437673758429601 0.1547649985552591 0.12707281577624749
0.12750209757250047 0.10380004365002463 0.1236879703582274
NaN NaN NaN
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
0.97257011139465532 0.97396082703879372 0.97071128206803259
0.33143430895591242 0.32908000770149198 0.147642010742113
0.13079252680583225 0.13956214650903384 0.13478002187369886
0.10897649653936387 0.093223664813541662 0.10254065667902514
NaN NaN NaN
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
