#!/usr/bin/env bash
# p0sim's training step against the same model, batch and AdamW in PyTorch, one thread each,
# measured in one go so the ratios hold on a noisy machine; then a cross-check that PyTorch
# computes the same loss and logits from a p0sim run's weights as `p0sim eval`.
#
#   bench/peers/train_peer.sh [BUILD_DIR]     (default: ./build; needs p0sim and p0sim_bench)
#   env: PEER_SECONDS (timed seconds per torch config, default 3), PYTHON (default /usr/bin/python3),
#        OPENBLAS_CORETYPE (default from the CPU flags), ATEN_CPU_CAPABILITY (torch's own elementwise
#        kernels; default avx512 where the CPU has AVX-512 F/BW/VL/DQ: Debian's build otherwise stays
#        on AVX2, and avx512 made the peer's step 10-20% faster here, A/B interleaved)
#
# Debian's torch may resolve libblas.so.3 to the reference BLAS (7-10x slower), which would
# flatter p0sim: the torch process alone gets OpenBLAS preloaded, and prints which BLAS it mapped
# and a 512^3 GEMM rate as proof. On this VM OpenBLAS's CPU detection falls back to its generic
# "Prescott" kernels (~18 GFLOP/s instead of ~100+), so the core type is set from the CPU flags
# (override with OPENBLAS_CORETYPE).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
py="${PYTHON:-/usr/bin/python3}"
[ -x "$build/p0sim" ] && [ -x "$build/p0sim_bench" ] || { echo "need $build/p0sim and $build/p0sim_bench" >&2; exit 2; }
. "$here/torch_env.sh"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== p0sim: BM_train_step and the machine's single-thread Eigen SGEMM" >&2
"$build/p0sim_bench" --benchmark_filter='BM_train_step|BM_eigen_sgemm' --benchmark_format=json \
  --benchmark_min_time=1 > "$work/p0sim.json"

echo "== PyTorch peer (one thread, OpenBLAS)" >&2
env LD_PRELOAD="$openblas" ${OPENBLAS_CORETYPE:+OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE} \
  ${ATEN_CPU_CAPABILITY:+ATEN_CPU_CAPABILITY=$ATEN_CPU_CAPABILITY} OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
  "$py" "$here/torch_train.py" bench --seconds "${PEER_SECONDS:-3}" > "$work/torch.jsonl"

"$py" - "$work/p0sim.json" "$work/torch.jsonl" <<'EOF'
import json, re, sys
p0 = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
info, rows = lines[0], lines[1:]
print(f"torch {info['torch']}, threads {info['threads']}, BLAS mapped: {', '.join(info['blas']) or 'none'}")
print(f"torch 512^3 SGEMM: {info['gemm512_gflops']:.1f} GFLOP/s (OPENBLAS_CORETYPE {info['openblas_coretype']}, "
      f"ATEN_CPU_CAPABILITY {info.get('aten_capability', '(default)')})")
ours = {}
for b in p0["benchmarks"]:
    if b["name"].startswith("BM_eigen_sgemm"):
        print(f"p0sim {b['name']}: {b['GFLOP/s']:.1f} GFLOP/s")
    m = re.match(r"BM_train_step/C:(\d+)/H:(\d+)/T:(\d+)/B:(\d+)", b["name"])
    if m:
        ours[tuple(map(int, m.groups()))] = b
scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
print("steps/s per wall second (CPU second in brackets: on a shared machine the fairer ratio)")
print(f"{'config (V=64, L=2)':<24}{'p0sim':>18}{'torch':>18}{'ratio':>14}{'p0sim GFLOP/s':>15}")
for r in rows:
    key = (r["C"], r["H"], r["T"], r["B"])
    b = ours.get(key)
    name = f"C={r['C']} H={r['H']} T={r['T']} B={r['B']}"
    tw, tc = r["steps_per_s"], r["steps_per_cpu_s"]
    if b is None:
        print(f"{name:<24}{'-':>18}{tw:>9.1f} [{tc:>6.1f}]")
        continue
    u = scale[b["time_unit"]]
    pw, pc = 1.0 / (b["real_time"] * u), 1.0 / (b["cpu_time"] * u)
    print(f"{name:<24}{pw:>9.1f} [{pc:>6.1f}]{tw:>9.1f} [{tc:>6.1f}]{pw / tw:>6.2f} [{pc / tc:>5.2f}]"
          f"{b.get('GFLOP/s', float('nan')):>15.1f}")
EOF

echo "== cross-check: PyTorch (float64) on a p0sim run's weights vs p0sim eval" >&2
"$build/p0sim" train --vocab 16 --d-model 32 --heads 2 --seq-len 16 --batch 8 --steps 50 --lr 1e-2 \
  --task backcopy --triggers 2 --seed 3 --log-every 1000 --out "$work/run" > /dev/null 2> "$work/train.log"
"$py" -c "import numpy as np; np.save('$work/tokens.npy', np.random.RandomState(0).randint(0, 16, size=(40, 17)).astype(np.int64))"
"$build/p0sim" eval --weights "$work/run/weights" --tokens "$work/tokens.npy" --out "$work/eval" > /dev/null
OMP_NUM_THREADS=1 "$py" "$here/torch_train.py" check "$work/run/weights" "$work/tokens.npy" "$work/eval"
