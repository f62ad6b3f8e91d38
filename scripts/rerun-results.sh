#!/usr/bin/env bash
# Re-runs every committed result (README tables, docs/search/**) with this build's engine version,
# as a change to the arithmetic requires: the headline experiment, the firstrecall-lookup sink
# controls (and their main and control at 4000 steps), search stages A-H, the warm starts, the
# no-norm model, and the text task's phase diagram and controls (the prefix-bidirectional one too),
# Bigram-Backcopy without BOS. Resumable: run it again after a stop and finished experiments are
# kept (experiment and sweep --resume). Takes about fourteen hours on two cores (the phase diagram
# about 2.5 of them, the text controls about 1.2, the text prefix-bidirectional control about 1.6,
# backcopy_nobos about 4.5): split it over sessions by NAMES, or just run it again.
#   bash scripts/rerun-results.sh [OUT] [NAMES]     (default OUT out/rerun; NAMES e.g. "p0sink stage_a")
#   P0SIM_BIN=path/to/p0sim to use another binary than build/p0sim.
# Then: python3 scripts/compare_results.py OUT compares the verdicts with the committed ones, and
# OUT/tables/*.md hold the README's tables; docs/search/<name>/ gets the new verdicts, results.csv
# (and ablations.csv) and scripts, and python3 scripts/verdict_summary.py then rewrites
# docs/search/verdict.{json,md} and prints the README's cross-study table. The Guo et al.
# replication (scripts/guo_replication.sh, about 14 core-hours for 5 seeds; its 3-layer pair at 4000
# steps, docs/search/guo_long, about 10; SGD in 1 layer and ReLU attention in 3, docs/search/guo_depth,
# about 4, reading guo_long's runs), Bigram-Backcopy at 4000 steps (configs/backcopy_long.toml,
# about 1.2 core-hours per run) and the long text runs (configs/text_long.toml) are run on their
# own.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/rerun}"
bin="${P0SIM_BIN:-build/p0sim}"
threads="${THREADS:-2}"
declare -A config=(
  [p0sink]=configs/p0sink.toml
  [frlookup_controls]=configs/search/frlookup_sink_controls.toml
  [frlookup_control_convergence]=configs/search/frlookup_control_convergence.toml
  [stage_a]=configs/search/stage_a_tasks.toml
  [stage_b]=configs/search/stage_b_width_length.toml
  [stage_c]=configs/search/stage_c_long.toml
  [stage_d]=configs/search/stage_d_depth_tasks.toml
  [stage_e]=configs/search/stage_e_learning_rate.toml
  [stage_f]=configs/search/stage_f_length256.toml
  [stage_g]=configs/search/stage_g_20000_steps.toml
  [stage_h]=configs/search/stage_h_long_context.toml
  [sgd_from_scratch]=configs/sgd_from_scratch.toml
  [no_norm]=configs/no_norm.toml
  [text_controls]=configs/text_controls.toml
  [text_prefix_control]=configs/text_prefix_control.toml
  [backcopy_nobos]=configs/backcopy_nobos.toml
)
names="${2:-p0sink frlookup_controls frlookup_control_convergence stage_a stage_b stage_c stage_d stage_e stage_f stage_h stage_g warm_start warm_start_optimizers sgd_from_scratch no_norm text_phase text_controls text_prefix_control backcopy_nobos}"
mkdir -p "$out/tables"
"$bin" --version > "$out/version.txt"

experiment() {  # name
  local name="$1" dir="$out/$1"
  if [ -d "$dir" ]; then
    "$bin" experiment --resume --threads "$threads" --out "$dir" > "$dir.log" 2>&1
  else
    # seeds: the config's [experiment] seeds (the headline's 10), else 3
    "$bin" experiment --config "${config[$name]}" --threads "$threads" --out "$dir" > "$dir.log" 2>&1
  fi
  "$bin" plot --force "$dir" >> "$dir.log" 2>&1
  # stage C's figure is one run over training: seed 0 of its one cell
  [ "$name" = stage_c ] && "$bin" plot --force "$dir"/runs/*/seed-0 --out "$dir/plots/seed-0" >> "$dir.log" 2>&1
  mkdir -p "docs/search/$name"
  cp "$dir/experiment.toml" "$dir/verdict.json" "$dir/results.csv" "docs/search/$name/"
  if [ -e "$dir/ablations.csv" ]; then cp "$dir/ablations.csv" "docs/search/$name/"; fi
  for gp in "$dir"/plots/*.gp "$dir"/plots/seed-0/*.gp; do
    [ -e "$gp" ] || continue
    case "$name" in
      p0sink) case "$(basename "$gp")" in ablations_main.gp) cp "$gp" "docs/search/$name/" ;; esac ;;
      stage_c) case "$(basename "$gp")" in emergence.gp) cp "$gp" "docs/search/$name/" ;; esac ;;
      *) case "$(basename "$gp")" in heat_*.gp) cp "$gp" "docs/search/$name/" ;; esac ;;
    esac
  done
  # the curves over training of the experiments that test a claim (the stages are searches: heat maps)
  case "$name" in
    p0sink | frlookup_* | sgd_from_scratch | no_norm)
      python3 scripts/experiment_curves.py "$dir" "docs/search/$name" >> "$dir.log" 2>&1 ;;
    text_prefix_control)  # its curves.png is text_phase.py's; matched.md beside these
      python3 scripts/experiment_curves.py "$dir" "docs/search/$name/experiment" >> "$dir.log" 2>&1 ;;
  esac
  case "$name" in
    stage_*) python3 scripts/search_table.py "$dir/results.csv" > "$out/tables/$name.md" ;;
    text_controls | text_prefix_control)
      python3 scripts/text_phase.py "docs/search/$name" "$dir/runs" > "$out/tables/$name.md" ;;
  esac
  echo "$(date -u +%H:%M:%S) $name done"
}

text_phase() {  # the text task's T x tokens phase diagram: a sweep keeping every run for its traces
  local dir="$out/text_phase"
  if [ -d "$dir" ]; then
    "$bin" sweep --config "$dir/sweep.toml" --resume --threads "$threads" --out "$dir" > "$dir.log" 2>&1
  else
    "$bin" sweep --config configs/sweep_text_phase.toml --keep-runs --threads "$threads" --out "$dir" > "$dir.log" 2>&1
  fi
  python3 scripts/text_phase.py docs/search/text_phase "$dir/runs" > "$out/tables/text_phase.md"
  cp "$dir/results.csv" "$dir/sweep.toml" docs/search/text_phase/
  echo "$(date -u +%H:%M:%S) text_phase done"
}

warm_start_optimizers() {  # why training removes the circuit's high norm (docs/search/warm_start_optimizers)
  P0SIM_BIN="$bin" bash scripts/warm_start_optimizers.sh "$out/warm_start_optimizers" > "$out/warm_start_optimizers.log"
  python3 scripts/warm_start_table.py "$out/warm_start_optimizers" > docs/search/warm_start_optimizers/table.md
  cp "$out/warm_start_optimizers"/norm_jacobian.{md,csv} docs/search/warm_start_optimizers/
  echo "$(date -u +%H:%M:%S) warm_start_optimizers done"
}

warm_start() {  # the README's table: lr x weight decay x seeds 1-3
  local lr wd seed dir
  for lr in 3e-4 3e-3; do
    for wd in 0 0.1; do
      for seed in 1 2 3; do
        dir="$out/warm_start/lr${lr}_wd${wd}_seed${seed}"
        [ -f "$dir/warm_start.json" ] && continue
        rm -rf "$dir"
        "$bin" train --config configs/train_firstrecall.toml --vocab 32 --warm-start circuit --lr "$lr" \
          --weight-decay "$wd" --seed "$seed" --out "$dir" > "$dir.log" 2>&1 &
        [ "$(jobs -rp | wc -l)" -ge "$threads" ] && wait -n
      done
    done
  done
  wait
  echo "$(date -u +%H:%M:%S) warm_start done"
}

mkdir -p "$out/warm_start"
for name in $names; do
  case "$name" in
    warm_start | warm_start_optimizers | text_phase) "$name" ;;
    *) experiment "$name" ;;
  esac
done
