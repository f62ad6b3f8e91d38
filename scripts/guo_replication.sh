#!/usr/bin/env bash
# Guo et al. (2024)'s Bigram-Backcopy replication (configs/guo_backcopy.toml): every arm of
# docs/search/guo_backcopy/README.md for each seed, two runs at a time; then each finished run's
# record into DOCS/runs, and the curves, the table and the effects over every seed kept there into
# DOCS (scripts/guo_figures.py; step by step in DOCS/trajectory.md). Resumable: a run whose
# directory holds a summary.json is kept, one with a checkpoint continues from it. About 2
# core-hours per seed on a quiet machine with all seven arms (1.5 for the first five, sgd_L1 and
# relu_L3 about 0.5 more).
#   bash scripts/guo_replication.sh [OUT [DOCS]]   (default out/guo: OUT/seed-S/ARM, and
#                                                    docs/search/guo_backcopy; env P0SIM_BIN,
#                                                    SEEDS, default "1 2 3 4 5"; ARMS, default all;
#                                                    STEPS: every arm's steps instead of its own)
# With STEPS above a finished run's steps the run is extended from its last checkpoint (the arms
# have a constant learning rate, so it ends as a run given STEPS from the start): a study can
# lengthen in stages, e.g. docs/search/guo_long, the 3-layer pair:
#   ARMS="adam_L3 sgd_L3" STEPS=4000 bash scripts/guo_replication.sh out/guo_long docs/search/guo_long
# REFERENCE="NAME=DIR[@STEP] ..." draws and tests arms kept by another study beside this one's (up to
# STEP: a longer study's runs stand for the shorter one's they continue), without running or keeping them:
#   ARMS="adam_L1 sgd_L1 relu_L3" REFERENCE="adam_L3=docs/search/guo_long/runs/adam_L3@1500" \
#     bash scripts/guo_replication.sh out/guo docs/search/guo_depth
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/guo}"
docs="${2:-docs/search/guo_backcopy}"
bin="${P0SIM_BIN:-build/p0sim}"
seeds="${SEEDS:-1 2 3 4 5}"
config=configs/guo_backcopy.toml
mkdir -p "$out"
declare -A arms=(
  [adam_L1]="--batch 16"
  [relu_L1]="--batch 16 --attn relu --lr 3e-3"
  [adam_L3]="--layers 3 --batch 16"
  [sgd_L3]="--layers 3 --batch 16 --optimizer sgd --lr 0.03 --momentum 0.9"
  # each optimiser and attention change at the other depth too: SGD in 1 layer (Guo et al. show it in
  # 3), ReLU attention in 3 layers at adam_L3's learning rate and steps (their 3-layer ReLU residual is
  # a run at 3e-4, whose attention they do not show; their 1-layer ReLU runs at 3e-3)
  [sgd_L1]="--batch 16 --optimizer sgd --lr 0.03 --momentum 0.9"
  [relu_L3]="--layers 3 --batch 16 --attn relu"
  [nope_L3_nobos]="--layers 3 --batch 16 --bos=false --pos none --seq-len 256"
)
declare -A steps=([adam_L1]=1500 [relu_L1]=1000 [adam_L3]=1500 [sgd_L3]=1500 [nope_L3_nobos]=1000 [sgd_L1]=1500
  [relu_L3]=1500)
order="${ARMS:-adam_L3 sgd_L3 adam_L1 relu_L1 nope_L3_nobos sgd_L1 relu_L3}"
for name in $order; do
  [ -n "${arms[$name]+set}" ] || { echo "ARMS: no arm '$name' (arms: ${!arms[*]})" >&2; exit 2; }
done
run() {  # seed arm
  local dir="$out/seed-$1/$2" n="${STEPS:-${steps[$2]}}"
  mkdir -p "$out/seed-$1"
  if [ -f "$dir/config.toml" ]; then
    # finished: nothing to do, or with STEPS above its steps extended; unfinished: continued
    "$bin" train --resume "$dir" ${STEPS:+--steps "$STEPS"} >> "$dir.log" 2>&1
  else
    # shellcheck disable=SC2086  # the arm's options are words
    "$bin" train --config "$config" ${arms[$2]} --steps "$n" --seed "$1" --force --out "$dir" > "$dir.log" 2>&1
  fi
}
running=0
for seed in $seeds; do
  for name in $order; do
    if [ "$running" -ge 2 ]; then wait -n; running=$((running - 1)); fi
    run "$seed" "$name" &
    running=$((running + 1))
  done
done
wait
# Each finished run's record (its config, logs and probes; not its weights or checkpoints) is kept in
# DOCS/runs/ARM/seed-S, and the figures are drawn from every run kept there, so a study's docs redraw
# from the repository alone and a later call with new seeds never redraws them from fewer seeds. A kept
# record is replaced only by a run whose probes differ (one extended with STEPS), and that is said.
args=()
for name in $order; do
  for dir in "$out"/seed-*/"$name"; do
    [ -f "$dir/summary.json" ] || continue
    kept="$docs/runs/$name/$(basename "$(dirname "$dir")")"
    if [ -f "$kept/trace.csv" ]; then
      cmp -s "$dir/trace.csv" "$kept/trace.csv" && continue
      echo "guo_replication.sh: replacing $kept with $dir (its probes differ: extended, or another engine version)" >&2
    fi
    mkdir -p "$kept"
    cp "$dir"/{config.toml,train.csv,trace.csv,heads.csv,summary.json} "$kept/"
  done
  if [ -d "$docs/runs/$name" ]; then args+=("$name=$docs/runs/$name"); fi
done
if [ "${#args[@]}" -eq 0 ]; then
  echo "guo_replication.sh: no finished run under $out or $docs/runs: no figures drawn" >&2
  exit 1
fi
read -ra reference <<< "${REFERENCE:-}"
python3 scripts/guo_figures.py "$docs" "${args[@]}" "${reference[@]}"
# The same runs step by step, per arm and per seed (scripts/trajectory_table.py): every 250 steps to
# 1000, then every 500 to the last step of the longest kept run (its train.csv's last row).
longest=0
for name in $order; do
  for kept in "$docs/runs/$name"/seed-*; do
    [ -d "$kept" ] || continue
    args+=("$name-$(basename "$kept")=$kept")
    last=$(tail -n 1 "$kept/train.csv" | cut -d, -f1)
    if [ "$last" -gt "$longest" ]; then longest="$last"; fi
  done
done
at="0,250,500,750,1000"
for ((s = 1500; s <= longest; s += 500)); do at+=",$s"; done
python3 scripts/trajectory_table.py "$docs/trajectory.md" "$at" "${args[@]}" > /dev/null
echo "wrote $docs/trajectory.md"
