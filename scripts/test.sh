#!/usr/bin/env bash
# The whole test suite: installs packages if missing, builds, runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# The binary and the test executables only: the benchmarks (bench/) are not part of the suite
# and cost CI a minute of compiling; scripts/build.sh (the main job's build) builds them.
cmake --preset release >/dev/null
targets=(p0sim test_theory test_sim test_study test_cli)
# p0sim-mpi exists where CMake found OpenMPI, the Python module where it found Python's headers
# and pybind11 (scripts/install-deps.sh installs all three).
for optional in p0sim-mpi p0sim_python; do
  if cmake --build --preset release --target help | grep -w "$optional" >/dev/null; then targets+=("$optional"); fi
done
cmake --build --preset release --target "${targets[@]}"
ctest --preset release
# The engine's promise across CPUs: the golden runs under emulated Intel and AMD CPUs.
bash scripts/cross-cpu-check.sh build/p0sim
# The MPI variant: build-mpi/p0sim under mpirun -np 3 must write the single-process
# bytes. Skipped where OpenMPI is absent or with P0SIM_MPI_CHECK=0.
if [ "${P0SIM_MPI_CHECK:-1}" != 0 ] && command -v mpirun >/dev/null && command -v mpicxx >/dev/null; then
  bash scripts/mpi-check.sh
fi
