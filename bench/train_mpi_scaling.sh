#!/usr/bin/env bash
# One run across MPI ranks: the same training (C=128, T=64, B=32, L=2, 60 steps: 8 chunks per
# step) on one process with one thread, and under `mpirun -np 2` with one thread per rank; prints
# the median wall time of each over 3 repeats, the speed-up, and checks the weights are identical.
# On this 2-core machine it measures the exchange's cost against the second core's gain; on a
# cluster, pass -np N and a hostfile through MPIRUN_ARGS.
# Usage: bash bench/train_mpi_scaling.sh [BUILD_DIR]   (default: build; needs BUILD_DIR/p0sim-mpi)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build}/p0sim-mpi"
[ -x "$bin" ] || { echo "train_mpi_scaling.sh: no $bin (install OpenMPI: scripts/install-deps.sh, then build)" >&2; exit 2; }
ranks="${P0SIM_MPI_RANKS:-2}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(train --d-model 128 --heads 4 --seq-len 64 --batch 32 --steps 60 --lr 3e-3 --task firstrecall
      --probe-every 0 --threads 1 --seed 1)
median_wall() {  # median of 3 wall times of "$@" --out DIR
  local times=()
  for i in 1 2 3; do
    rm -rf "$work/run"
    local start end
    start=$(date +%s.%N)
    "$@" --out "$work/run" >/dev/null 2>&1
    end=$(date +%s.%N)
    times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')")
  done
  printf '%s\n' "${times[@]}" | sort -g | sed -n 2p
}
one=$(median_wall "$bin" "${args[@]}")
cp "$work/run/weights/lm_head.npy" "$work/one.npy"
many=$(median_wall mpirun --allow-run-as-root --oversubscribe -np "$ranks" ${MPIRUN_ARGS:-} "$bin" "${args[@]}")
cmp -s "$work/one.npy" "$work/run/weights/lm_head.npy" || { echo "weights DIFFER between 1 and $ranks ranks"; exit 1; }
printf '1 process: %.2f s; mpirun -np %d: %.2f s (both incl. start-up; medians of 3): %.2fx; weights identical\n' \
  "$one" "$ranks" "$many" "$(awk -v a="$one" -v b="$many" 'BEGIN { print a / b }')"
