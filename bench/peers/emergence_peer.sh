#!/usr/bin/env bash
# Seconds to identification emergence on firstrecall, p0sim (BM_emergence) against the PyTorch
# peer (torch_emergence.py), same config, same seeds (1..SEEDS), one thread each, run in one go; prints
# each median and the ratio (torch / p0sim: how many times sooner p0sim gets there), in wall and in
# process CPU seconds (the steadier figure on a shared machine). Then the ceiling: BM_step_gemm_floor
# (the step's GEMMs alone, same chunks, same run) times p0sim's steps is the least time any kernel
# work outside Eigen's GEMM could bring p0sim to, so torch s / that is the most the ratio can reach.
#
#   bench/peers/emergence_peer.sh [BUILD_DIR]      (default ./build; needs p0sim_bench)
#   env: POINTS (default "64,32 32,16": the default firstrecall config and the smallest point),
#        SEEDS (default 3: seeds 1..SEEDS on both sides; the medians are over them),
#        PYTHON (default /usr/bin/python3), OPENBLAS_CORETYPE (default from the CPU flags),
#        ATEN_CPU_CAPABILITY (default avx512 where the CPU has it; see train_peer.sh)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
py="${PYTHON:-/usr/bin/python3}"
points="${POINTS:-64,32 32,16}"
seeds="${SEEDS:-3}"
[[ "$seeds" =~ ^[1-9][0-9]*$ ]] || { echo "SEEDS: expected a positive integer, got '$seeds'" >&2; exit 2; }
[ -x "$build/p0sim_bench" ] || { echo "need $build/p0sim_bench" >&2; exit 2; }
. "$here/torch_env.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

filter=""
peer_args=()
for p in $points; do
  d="${p%,*}"; T="${p#*,}"
  filter="${filter:+$filter|}BM_emergence/d:$d/T:$T/|BM_step_gemm_floor/C:$d/H:4/T:$T/B:64\$"
  peer_args+=(--point "$p")
done
echo "== p0sim BM_emergence ($points), one thread" >&2
P0SIM_EMERGE_SEEDS="$seeds" P0SIM_EMERGE_THREADS=1 "$build/p0sim_bench" --benchmark_filter="$filter" \
  --benchmark_repetitions=1 --benchmark_format=json > "$work/p0sim.json"
echo "== PyTorch peer, one thread, OpenBLAS" >&2
env LD_PRELOAD="$openblas" ${OPENBLAS_CORETYPE:+OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE} \
  ${ATEN_CPU_CAPABILITY:+ATEN_CPU_CAPABILITY=$ATEN_CPU_CAPABILITY} OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
  "$py" "$here/torch_emergence.py" --seeds "$seeds" "${peer_args[@]}" > "$work/torch.jsonl"

"$py" - "$work/p0sim.json" "$work/torch.jsonl" "$seeds" <<'PYEOF'
import json, re, sys
p0 = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
info, rows = lines[0], lines[1:]
print(f"torch {info['torch']}, threads {info['threads']}, BLAS mapped: {', '.join(info['blas']) or 'none'}; "
      f"512^3 SGEMM {info['gemm512_gflops']:.1f} GFLOP/s")
ours, floor_ms = {}, {}
for b in p0["benchmarks"]:
    m = re.match(r"BM_emergence/d:(\d+)/T:(\d+)", b["name"])
    if m:
        ours[tuple(map(int, m.groups()))] = b
    m = re.match(r"BM_step_gemm_floor/C:(\d+)/H:4/T:(\d+)/B:64$", b["name"])
    if m:
        assert b["time_unit"] == "ms"
        floor_ms[tuple(map(int, m.groups()))] = b["real_time"]
print(f"median over seeds 1..{sys.argv[3]}; seconds are wall [process CPU]; ratio = torch / p0sim")
print(f"{'point':<12}{'p0sim steps':>12}{'torch steps':>12}{'p0sim s':>18}{'torch s':>18}{'ratio':>16}{'emerged p0/torch':>18}")
for r in rows:
    b = ours.get((r["d"], r["T"]))
    if b is None:
        continue
    ps, pc, ts, tc = b["seconds_to_emergence"], b["cpu_seconds_to_emergence"], r["seconds_to_emergence"], r["cpu_seconds_to_emergence"]
    print(f"d={r['d']},T={r['T']:<6}{b['steps_to_emergence']:>12.0f}{r['steps_to_emergence']:>12.0f}"
          f"{ps:>9.2f} [{pc:>6.2f}]{ts:>9.2f} [{tc:>6.2f}]{ts / ps:>7.2f} [{tc / pc:>5.2f}]"
          f"{b['emerged']:>10.2f}/{r['emerged']:.2f}")
print("ceiling: p0sim with every kernel but Eigen's GEMM (and the probes) at zero cost = steps x GEMM floor")
print(f"{'point':<12}{'floor ms/step':>14}{'p0sim ms/step':>14}{'torch ms/step':>14}{'ceiling ratio':>15}{'at torch steps':>16}")
for r in rows:
    b, f = ours.get((r["d"], r["T"])), floor_ms.get((r["d"], r["T"]))
    if b is None or f is None:
        continue
    ps, ts = b["steps_to_emergence"], r["steps_to_emergence"]
    ours_ms = 1e3 * b["seconds_to_emergence"] / ps if ps else float("nan")
    torch_ms = 1e3 * r["seconds_to_emergence"] / ts if ts else float("nan")
    print(f"d={r['d']},T={r['T']:<6}{f:>14.2f}{ours_ms:>14.2f}{torch_ms:>14.2f}"
          f"{r['seconds_to_emergence'] / (ps * f * 1e-3):>14.2f}x{torch_ms / f:>15.2f}x")
PYEOF
