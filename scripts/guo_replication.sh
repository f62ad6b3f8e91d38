#!/usr/bin/env bash
# Guo et al. (2024)'s Bigram-Backcopy replication (configs/guo_backcopy.toml), every arm of
# docs/search/guo_backcopy/README.md, two at a time; then their curves and table into
# docs/search/guo_backcopy/ (scripts/guo_figures.py). Resumable: an arm whose run directory holds
# a summary.json is kept, one with a checkpoint continues from it. About 1.5 hours of two cores.
#   bash scripts/guo_replication.sh [OUT]     (default out/guo; P0SIM_BIN, SEED env)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/guo}"
bin="${P0SIM_BIN:-build/p0sim}"
seed="${SEED:-1}"
config=configs/guo_backcopy.toml
mkdir -p "$out"
declare -A arms=(
  [adam_L1]="--batch 16 --steps 1500"
  [relu_L1]="--batch 16 --steps 1000 --attn relu --lr 3e-3"
  [adam_L3]="--layers 3 --batch 16 --steps 1500"
  [sgd_L3]="--layers 3 --batch 16 --steps 1500 --optimizer sgd --lr 0.03 --momentum 0.9"
  [nope_L3_nobos]="--layers 3 --batch 16 --steps 1000 --bos=false --pos none --seq-len 256"
)
order="adam_L3 sgd_L3 adam_L1 relu_L1 nope_L3_nobos"
run() {  # name
  local dir="$out/$1"
  if [ -f "$dir/summary.json" ]; then return 0; fi
  if [ -d "$dir/checkpoint" ]; then
    "$bin" train --resume "$dir" > "$dir.log" 2>&1
  else
    # shellcheck disable=SC2086  # the arm's options are words
    "$bin" train --config "$config" ${arms[$1]} --seed "$seed" --force --out "$dir" > "$dir.log" 2>&1
  fi
}
set -- $order
while [ "$#" -gt 0 ]; do
  run "$1" &
  if [ "$#" -gt 1 ]; then run "$2" & fi
  wait
  shift; [ "$#" -gt 0 ] && shift
done
args=()
for name in $order; do args+=("$name=$out/$name"); done
python3 scripts/guo_figures.py docs/search/guo_backcopy "${args[@]}"
