#!/usr/bin/env bash
# Checks that `mpirun -np 3` writes the same results.csv bytes as a single-process sweep, and the same run files as a single-process `train`. Needs libopenmpi-dev and
# openmpi-bin (scripts/install-deps.sh installs them). Runs as root in CI, hence
# --allow-run-as-root; --oversubscribe lets 3 ranks share fewer cores.
set -euo pipefail
cd "$(dirname "$0")/.."
# The release build makes build/p0sim-mpi where OpenMPI is installed (only the entry point and the
# MPI session are compiled again); otherwise build the whole `mpi` preset.
if [ -x build/p0sim-mpi ]; then
  bin=build/p0sim-mpi
else
  cmake --preset mpi >/dev/null
  cmake --build --preset mpi --target p0sim
  bin=build-mpi/p0sim
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(sweep --vocab 16 --heads 2 --batch 8 --task firstrecall --steps 20 --lr 3e-3 --probe-every 10 --probe-batch 16
      --grid d-model=8,16 --grid seq-len=4,8 --seeds 3)
"$bin" "${args[@]}" --out "$work/single" >/dev/null 2>&1
mpirun --allow-run-as-root --oversubscribe -np "${P0SIM_MPI_RANKS:-3}" "$bin" "${args[@]}" --out "$work/mpi" >/dev/null 2>"$work/mpi.err" ||
  { cat "$work/mpi.err"; exit 1; }
if cmp "$work/single/results.csv" "$work/mpi/results.csv"; then
  echo "mpirun -np ${P0SIM_MPI_RANKS:-3}: results.csv identical to the single-process sweep ($(($(wc -l < "$work/mpi/results.csv") - 1)) runs)"
else
  exit 1
fi

# One run split across the ranks: a config of 8 chunks per step (C=64, T=32, B=64), so each rank
# computes some; every weight, the probe trace and the losses must have the single-process bits.
train=(train --d-model 64 --heads 4 --seq-len 32 --batch 64 --steps 12 --lr 3e-3 --task firstrecall
       --probe-every 6 --probe-batch 16 --seed 3)
"$bin" "${train[@]}" --out "$work/train-single" >/dev/null 2>&1
mpirun --allow-run-as-root --oversubscribe -np "${P0SIM_MPI_RANKS:-3}" "$bin" "${train[@]}" --threads 2 \
  --out "$work/train-mpi" >/dev/null 2>"$work/train-mpi.err" || { cat "$work/train-mpi.err"; exit 1; }
same=0
for f in "$work"/train-single/weights/*.npy "$work"/train-single/trace.csv "$work"/train-single/heads.csv; do
  cmp "$f" "$work/train-mpi/${f#"$work"/train-single/}" || exit 1
  same=$((same + 1))
done
# train.csv without its wall-clock tokens_per_s column
cmp <(cut -d, -f1-4 "$work/train-single/train.csv") <(cut -d, -f1-4 "$work/train-mpi/train.csv") || exit 1
echo "mpirun -np ${P0SIM_MPI_RANKS:-3} train: $same weight, trace and head files and the loss log identical to one process"
