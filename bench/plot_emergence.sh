#!/usr/bin/env bash
# Plot seconds to identification emergence over (d, T) from a BM_emergence JSON file:
#   bench/plot_emergence.sh GRID.json OUT.png
# One line per d over T (log-scaled wall seconds, dashed: process CPU seconds; medians over seeds;
# the `emerged` column of OUT.dat says which points emerged in every seed). Needs gnuplot
# (gnuplot-nox) and python3. Leaves OUT.gp and OUT.dat next to OUT.png.
set -euo pipefail
json="$1"; png="$2"
dat="${png%.png}.dat"; gp="${png%.png}.gp"
/usr/bin/python3 - "$json" "$dat" <<'PYEOF'
import json, re, sys
rows = []
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    m = re.match(r"BM_emergence/d:(\d+)/T:(\d+)", b["name"])
    if m and b.get("run_type", "iteration") == "iteration":
        rows.append((int(m[1]), int(m[2]), b["seconds_to_emergence"], b["cpu_seconds_to_emergence"],
                     b["steps_to_emergence"], b["emerged"]))
rows.sort()
with open(sys.argv[2], "w") as f:
    f.write("# d T seconds cpu_seconds steps emerged\n")
    last = None
    for r in rows:
        if last is not None and r[0] != last:
            f.write("\n\n")
        last = r[0]
        f.write(" ".join(str(v) for v in r) + "\n")
PYEOF
cat > "$gp" <<GPEOF
set terminal pngcairo noenhanced size 720,480 font "sans,10"
set output "$png"
set title "p0sim: seconds to identification emergence (firstrecall, B=64, median of 3 seeds, 1 thread)"
set xlabel "T (sequence length)"
set ylabel "seconds (wall; dashed: process CPU)"
set logscale xy
set xtics (16, 32, 64)
set grid
set key top left
plot for [i=0:2] "$dat" index i using 2:3 with linespoints lw 2 pt 7 lc i+1 title columnhead(1) , \\
     for [i=0:2] "$dat" index i using 2:4 with lines dt 2 lc i+1 notitle
GPEOF
# titles: d per block
sed -i 's/title columnhead(1)/title sprintf("d=%d", word("32 64 128", i+1)+0)/' "$gp"
gnuplot "$gp"
echo "wrote $png ($gp, $dat)"
