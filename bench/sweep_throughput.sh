#!/usr/bin/env bash
# Issue-5 throughput: the 64-run sweep of configs/sweep_bench.toml (d in {16,32} x T in {16,32}
# x 16 seeds, 200 steps) with --threads 1 and 2; prints runs per second, the speed-up, and the
# scheduler's per-run overhead (wall time of the sweep minus the runs' own wall time, per run).
# Usage: bash bench/sweep_throughput.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build}/p0sim"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A rate
for threads in 1 2; do
  start=$(date +%s.%N)
  "$bin" sweep --config configs/sweep_bench.toml --threads "$threads" --out "$work/t$threads" 2>/dev/null >/dev/null
  end=$(date +%s.%N)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
  runs=$(($(wc -l < "$work/t$threads/results.csv") - 1))
  busy=$(awk -F, 'NR > 1 { s += $(NF - 1) } END { printf "%.6f", s }' "$work/t$threads/timings.csv")
  # Idle worker time per run: wall x threads minus the runs' own time, spread over the runs
  # (process start, planning, the journal, the final sort, and waiting at the end for the last run).
  overhead=$(awk -v w="$wall" -v t="$threads" -v b="$busy" -v n="$runs" 'BEGIN { print (w * t - b) / n * 1000 }')
  rate[$threads]=$(awk -v n="$runs" -v w="$wall" 'BEGIN { print n / w }')
  printf 'threads %d: %d runs in %.2f s = %.2f runs/s (%.0f runs/hour); summed run time %.2f s; overhead %.2f ms/run\n' \
    "$threads" "$runs" "$wall" "${rate[$threads]}" "$(awk -v r="${rate[$threads]}" 'BEGIN { print r * 3600 }')" "$busy" "$overhead"
done
cmp -s "$work/t1/results.csv" "$work/t2/results.csv" && echo "results.csv identical for threads 1 and 2" || { echo "results.csv DIFFERS"; exit 1; }
printf 'speed-up 1 -> 2 threads: %.2fx\n' "$(awk -v a="${rate[1]}" -v b="${rate[2]}" 'BEGIN { print b / a }')"
