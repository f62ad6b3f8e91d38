#!/usr/bin/env bash
# Installs every Debian 12 package p0sim needs (build, tests, benchmarks, plots, MPI, peers).
# Idempotent; run as root. Nothing is downloaded except Debian packages.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(
  build-essential cmake g++ pkg-config
  libeigen3-dev libboost-math-dev libcli11-dev catch2 libbenchmark-dev
  nlohmann-json3-dev librandom123-dev libtomlplusplus-dev
  libopenmpi-dev openmpi-bin gnuplot-nox
  python3 python3-numpy
  python3-dev pybind11-dev python3-pybind11 python3-pytest  # the Python module p0sim and its tests
  chromium python3-pil      # the HTML report's test renders it in headless Chromium and reads the screenshot
  clang libclang-rt-14-dev   # the sanitize preset: clang++ and libFuzzer's runtime (libclang_rt.fuzzer)
  clang-format              # scripts/check-format.sh (CI)
  fortunes                  # the text task's default corpus (/usr/share/games/fortunes)
  qemu-user                 # scripts/cross-cpu-check.sh: the golden runs under emulated Intel and AMD CPUs
)
# Optional peers for bench/peers (PyTorch with OpenBLAS) and the GEMM libraries that
# bench/bench_gemm_libs.cpp compares with Eigen (bench/gemm_libs_table.md). Opt-in: large download.
if [ "${P0SIM_PEERS:-0}" = 1 ]; then
  pkgs+=(python3-torch libopenblas0-pthread libopenblas-dev libblis-dev libxsmm-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
