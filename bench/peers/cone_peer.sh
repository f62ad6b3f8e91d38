#!/usr/bin/env bash
# Cone Monte Carlo vs its NumPy peer, one run: gauss, d=64, T=64, float32, causal, all positions.
# Prints both rates (sequences/s, 1 core) and their ratio, plus p0sim's 2-thread rate and scaling,
# for the full-vector estimator (the NumPy peer's algorithm) and the radial one (--estimator radial,
# the same law from O(T*H) draws per sequence).
# Usage: bench/peers/cone_peer.sh [BUILD_DIR]   (default: build; needs the p0sim_bench target)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
bench="$build/p0sim_bench"
[ -x "$bench" ] || { echo "cone_peer: $bench not found (build the p0sim_bench target)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$bench" --benchmark_filter='BM_cone_mc(_radial)?/d:64/T:64/threads:[12]/' --benchmark_min_time=3 \
  --benchmark_format=json >"$tmp/bench.json" 2>"$tmp/bench.err" || { cat "$tmp/bench.err" >&2; exit 1; }
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE may be set on this machine and slow NumPy down: unset for the peer only.
peer="$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$root/bench/peers/numpy_cone.py" --d 64 --T 64 --seconds 5)"
echo "$peer"
/usr/bin/python3 - "$tmp/bench.json" "$peer" <<'PY'
import json, re, sys
runs = {b["name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
def rate(bench, threads):
    name = f"{bench}/d:64/T:64/threads:{threads}/real_time"
    if name not in runs:
        raise SystemExit(f"no {name} in benchmark output")
    return runs[name]["sequences/s"]
one, two = rate("BM_cone_mc", 1), rate("BM_cone_mc", 2)
r_one, r_two = rate("BM_cone_mc_radial", 1), rate("BM_cone_mc_radial", 2)
numpy = float(re.search(r"sequences/s (\d+)", sys.argv[2]).group(1))
print(f"p0sim full-vector sequences/s {one:.0f} (1 thread), {two:.0f} (2 threads, x{two / one:.2f})")
print(f"p0sim radial      sequences/s {r_one:.0f} (1 thread), {r_two:.0f} (2 threads, x{r_two / r_one:.2f})")
print(f"ratio p0sim/numpy per core: full-vector {one / numpy:.1f}x (goal >= 10x); 2-thread scaling x{two / one:.2f} (goal >= 1.8x)")
print(f"ratio p0sim/numpy per core: radial kernel {r_one / numpy:.1f}x (goal >= 30x); 2-thread scaling x{r_two / r_one:.2f}")
PY
