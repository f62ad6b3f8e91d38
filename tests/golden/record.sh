#!/usr/bin/env bash
# Records the golden results of the engine version the binary reports, into
# tests/golden/engine-<N>/ (refused when that directory exists: an engine version's bits never
# change; a change of arithmetic bumps kEngineVersion in common/engine_version.hpp first).
# The runs are those of commands.txt.
#   usage: tests/golden/record.sh [BINARY]   (default build/p0sim)
set -euo pipefail
cd "$(dirname "$0")"
. ./golden.sh
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
o="$work/golden"
mkdir "$o"
"$bin" --version | golden_arithmetic > "$o/arithmetic.txt"
for run in train experiment sweep_train sweep_theory; do
  # shellcheck disable=SC2046  # the arguments are words of commands.txt
  "$bin" $(golden_args "$run") --out "$work/$run" >/dev/null 2>&1
  golden_files "$run" "$work/$run" | while read -r produced name; do cp "$produced" "$o/$name"; done
done
cp "$work/train/train.csv" "$o/train.train.csv"
cp "$work/train/summary.json" "$o/train.summary.json"
mv "$o" "$dir"
echo "recorded $(ls "$dir" | wc -l) golden files of engine version $engine in tests/golden/$dir:"
cat "$dir/arithmetic.txt"
