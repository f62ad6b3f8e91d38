#!/usr/bin/env bash
# Why training dismantles the hand-wired high-norm circuit: the README's warm start (firstrecall,
# V=32, C=64, T=32, L=2, B=64, 300 steps from `p0sim theory circuit` plus N(0, 0.01^2) noise) under
# AdamW and under SGD with momentum 0.9, each at two learning rates and weight decay 0 and 0.1,
# seeds 1-10 (env SEEDS; a run takes seconds, so ten); and, on each seed's untrained warm start and
# every end point, the loss along position 0's residual scale (`p0sim scale-p0`). Then the headline's
# trained models (configs/p0sink.toml's main and bos variants, 10 seeds, as a sweep keeping its runs)
# and, on every run here, the pre-norm
# Jacobian at position 0 against the other positions (scripts/norm_jacobian.py, through the Python
# module: OUT/norm_jacobian.md and .csv). Resumable: finished runs are kept.
#   bash scripts/warm_start_optimizers.sh [OUT]   (default out/warm_start_optimizers; ~50 min, one core;
#                                                  env P0SIM_BIN, default build/p0sim; PYTHONPATH,
#                                                  default build/python)
#   then: python3 scripts/warm_start_table.py OUT > docs/search/warm_start_optimizers/table.md
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/warm_start_optimizers}"
bin="${P0SIM_BIN:-build/p0sim}"
mkdir -p "$out"
base=(train --config configs/train_firstrecall.toml --vocab 32 --warm-start circuit --probe-every 50)
for seed in ${SEEDS:-1 2 3 4 5 6 7 8 9 10}; do
  dir="$out/start_seed$seed"
  [ -f "$dir/summary.json" ] || "$bin" "${base[@]}" --steps 0 --seed "$seed" --out "$dir" --force > /dev/null 2>&1
  [ -f "$dir/scale_p0.csv" ] || "$bin" scale-p0 "$dir" --factors 0.25,0.5,1,2,4 --out "$dir/scale_p0.csv" > /dev/null
  for arm in "adamw 3e-4" "adamw 3e-3" "sgd 0.03" "sgd 0.3"; do
    set -- $arm
    for wd in 0 0.1; do
      dir="$out/${1}_lr${2}_wd${wd}_seed$seed"
      [ -f "$dir/warm_start.json" ] && continue
      "$bin" "${base[@]}" --optimizer "$1" --lr "$2" --weight-decay "$wd" --seed "$seed" --out "$dir" --force \
        > "$dir.log" 2>&1
      "$bin" scale-p0 "$dir" --factors 0.25,0.5,1,2,4 --out "$dir/scale_p0.csv" --force > /dev/null
    done
  done
done
headline="$out/headline"
if [ -f "$headline/sweep.toml" ]; then
  "$bin" sweep --config "$headline/sweep.toml" --resume --threads 1 --out "$headline" > "$headline.log" 2>&1
else
  "$bin" sweep --experiment configs/p0sink.toml --grid variant=main,bos --seeds 10 --keep-runs --threads 1 \
    --out "$headline" > "$headline.log" 2>&1
fi
groups=("warm start, untrained=$out/start_seed*")
for arm in adamw_lr3e-4 adamw_lr3e-3 sgd_lr0.03 sgd_lr0.3; do
  for wd in 0 0.1; do groups+=("$arm wd $wd=$out/${arm}_wd${wd}_seed*"); done
done
groups+=("headline main, trained=$headline/runs/variant=main/seed-*" "headline bos, trained=$headline/runs/variant=bos/seed-*")
# Debian's interpreter, as the module's build picks it (CMakeLists.txt): numpy comes from apt
python=/usr/bin/python3
[ -x "$python" ] || python=python3
PYTHONPATH="${PYTHONPATH:-build/python}" "$python" scripts/norm_jacobian.py --csv "$out/norm_jacobian.csv" "${groups[@]}" \
  > "$out/norm_jacobian.md"
echo "done: $out"
