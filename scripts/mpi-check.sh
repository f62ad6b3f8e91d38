#!/usr/bin/env bash
# Checks that `mpirun -np 3` writes the same results.csv bytes as a single-process sweep. Needs libopenmpi-dev and
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
