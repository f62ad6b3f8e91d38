#!/usr/bin/env bash
# Records the golden results of the engine version the binary reports, into
# tests/golden/engine-<N>/ (refused when that directory exists: an engine version's bits never
# change; a change of arithmetic bumps kEngineVersion in common/engine_version.hpp first).
# The commands are the ones tests/cli_golden_results.cpp runs; keep the two in step.
#   usage: tests/golden/record.sh [BINARY]   (default build/p0sim)
set -euo pipefail
cd "$(dirname "$0")"
bin=$(realpath "${1:-../../build/p0sim}")
engine=$("$bin" --version | sed -n 's/.*engine version \([0-9]*\).*/\1/p')
[ -n "$engine" ] || { echo "record.sh: '$bin --version' names no engine version" >&2; exit 2; }
dir="engine-$engine"
if [ -e "$dir" ]; then
  echo "record.sh: $dir exists: engine version $engine's golden files are recorded; bump kEngineVersion to record new ones" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/out"
cp experiment.toml "$work/experiment.toml"  # the experiment's input, the same for every engine version
"$bin" --version | sed -n 's/.*SIMD: //p' > "$work/out/simd.txt"
"$bin" train --vocab 16 --d-model 8 --heads 2 --layers 2 --seq-len 8 --batch 8 --steps 12 --lr 3e-3 \
  --task firstrecall --probe-every 6 --probe-batch 16 --seed 7 --out "$work/train" >/dev/null 2>&1
"$bin" experiment --config "$work/experiment.toml" --seeds 2 --threads 2 --out "$work/experiment" >/dev/null 2>&1
"$bin" sweep --vocab 16 --heads 2 --batch 8 --steps 12 --probe-every 6 --probe-batch 16 --task firstrecall \
  --layers 2 --grid d-model=8,16 --grid seq-len=4,8 --grid mask=causal,prefix-bidirectional --seeds 2 \
  --threads 2 --out "$work/sweep" >/dev/null 2>&1
"$bin" sweep --kind theory --grid d=4,16 --grid T=4,8 --grid mask=causal,bidirectional --seeds 2 --trials 300 \
  --out "$work/theory" >/dev/null 2>&1
o="$work/out"
for f in train.csv trace.csv heads.csv summary.json; do cp "$work/train/$f" "$o/train.$f"; done
for f in "$work"/train/weights/*.npy; do cp "$f" "$o/train.weights.$(basename "$f")"; done
cp "$work/experiment/results.csv" "$o/experiment.results.csv"
cp "$work/experiment/verdict.json" "$o/experiment.verdict.json"
cp "$work/experiment/ablations.csv" "$o/experiment.ablations.csv"
cp "$work/experiment/experiment.toml" "$o/experiment.resolved.toml"
for f in trace.csv heads.csv config.toml; do cp "$work/experiment/runs/main/seed-0/$f" "$o/experiment.main-seed-0.$f"; done
cp "$work/sweep/results.csv" "$o/sweep_train.results.csv"
cp "$work/sweep/sweep.toml" "$o/sweep_train.sweep.toml"
cp "$work/theory/results.csv" "$o/sweep_theory.results.csv"
mv "$o" "$dir"
echo "recorded $(ls "$dir" | wc -l) golden files of engine version $engine in tests/golden/$dir (SIMD: $(cat "$dir/simd.txt"))"
