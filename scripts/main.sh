#!/usr/bin/env bash
# The main job: installs packages if missing, builds the p0sim binary (only what it runs), and runs
# the headline experiment on its default config (configs/p0sink.toml: firstrecall, causal
# NoPE/no-BOS vs its controls, 10 seeds of 4000 steps, verdict with bootstrap intervals, effect sizes,
# Welch tests and the control's content-only chance level; about an hour on two cores), plots it,
# and runs the cone-model theory that explains the asymmetry (configs/theory_cone.toml). Results go
# to a new directory under out/ (never over earlier results) with a self-contained HTML report
# (p0sim report); the last lines are the verdict and the report's path.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh p0sim
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out="out/p0sink-$stamp"
mkdir -p out
# The experiment wants its directory new (or empty), so the verdict's copy waits in a temporary file,
# removed if the job is interrupted: an interrupted job leaves only the experiment's own files.
verdict_tmp=$(mktemp)
trap 'rm -f "$verdict_tmp"' EXIT
./build/p0sim experiment --config configs/p0sink.toml --threads "$(nproc)" --out "$out" | tee "$verdict_tmp"
cat "$verdict_tmp" > "$out/verdict.txt"  # with the umask's permissions, not mktemp's 0600
./build/p0sim plot "$out" > "$out/plots.txt"
mkdir -p "$out/theory"
./build/p0sim theory cone --config configs/theory_cone.toml --threads "$(nproc)" --out "$out/theory/cone.csv" \
  > "$out/theory/cone.txt"
./build/p0sim report "$out" > /dev/null
# One seed's run of the main variant gets its own page: its attention heads, norms and curves.
run="$out/runs/main/seed-0"
./build/p0sim report "$run" > /dev/null
echo
echo "theory: the cone model's table is in $out/theory/cone.txt (and cone.csv)"
echo "plots: $out/plots/ ($(ls "$out/plots" | wc -l) PNG files)"
# The verdict last, so it is what the screen ends with.
sed -n '/^claims/,/^wrote/p' "$out/verdict.txt" | grep -v '^wrote'
echo "results: $out (verdict.json, verdict.txt, results.csv, ablations.csv, plots/, theory/)"
echo "report:  $out/report.html (one run: $run/report.html)"
