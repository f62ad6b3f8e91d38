#!/usr/bin/env bash
# The engine's speed figures in one command, each next to its goal, with the PyTorch peer
# measured in the same run (one thread each unless said; medians over REPS repetitions):
#   - whole step / its GEMMs alone (BM_parallel_step vs BM_step_gemm_floor, same chunks) at
#     C=128 (H=4, T=64, B=32) and C=32 (H=4, T=16, B=64);
#   - the C=128 step's FLOP rate against the core's peak FMA rate (BM_fma_peak_*: 256-bit, the
#     engine's packets, and 512-bit where the CPU has AVX-512);
#   - seconds to identification emergence against PyTorch+OpenBLAS (bench/peers/emergence_peer.sh);
#   - whole processes, start-up included: `p0sim train` against `torch_train.py run`, same model,
#     batch, steps, clipping and AdamW, at (C=32,T=16,B=16), (C=64,T=32,B=32), (C=128,T=64,B=32);
#   - one run on two threads against one, at C=128 and at the natural-text configuration.
#
#   bench/figures.sh [BUILD_DIR]     (default ./build; needs p0sim, p0sim_bench, python3-torch)
#   env: REPS (default 5), SEEDS (emergence seeds, default 3), PYTHON (default /usr/bin/python3)
# Run it on a quiet machine: the figures are wall-clock times.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-$here/../build}" && pwd)"
py="${PYTHON:-/usr/bin/python3}"
reps="${REPS:-5}"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "REPS: expected a positive integer, got '$reps'" >&2; exit 2; }
[ -x "$build/p0sim" ] && [ -x "$build/p0sim_bench" ] || { echo "need $build/p0sim and $build/p0sim_bench" >&2; exit 2; }
. "$here/peers/torch_env.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== p0sim_bench: steps, GEMM floors, peak FMA rate ($reps repetitions)" >&2
"$build/p0sim_bench" \
  --benchmark_filter='^BM_parallel_step/C:(128/H:4/T:64/B:32/threads:(1|2)|32/H:4/T:16/B:64/threads:1)/chunks:0/|^BM_parallel_step_text/|^BM_step_gemm_floor/C:(128/H:4/T:64/B:32|32/H:4/T:16/B:64)$|^BM_fma_peak_' \
  --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true --benchmark_format=json > "$work/bench.json"

echo "== emergence against PyTorch (bench/peers/emergence_peer.sh)" >&2
bash "$here/peers/emergence_peer.sh" "$build" > "$work/emergence.txt"

echo "== whole processes: p0sim train against torch_train.py run, interleaved, $reps each" >&2
env LD_PRELOAD_PEER="$openblas" OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-}" ATEN_CPU_CAPABILITY="${ATEN_CPU_CAPABILITY:-}" \
  "$py" - "$build/p0sim" "$here/peers/torch_train.py" "$py" "$reps" "$work" > "$work/process.json" <<'PYEOF'
import json, os, statistics, subprocess, sys, time
p0sim, peer, py, reps, work = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
# (V, C, H, T, B, L, steps): steps so that each process runs for about a second or more
configs = [(64, 32, 2, 16, 16, 2, 3000), (64, 64, 4, 32, 32, 2, 600), (64, 128, 4, 64, 32, 2, 150)]
peer_env = dict(os.environ, LD_PRELOAD=os.environ["LD_PRELOAD_PEER"], OPENBLAS_NUM_THREADS="1",
                OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
for k in ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY"):
    if not peer_env.get(k):
        peer_env.pop(k, None)
def timed(cmd, env=None):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0
out = []
for V, C, H, T, B, L, steps in configs:
    ours, theirs = [], []
    for r in range(reps):
        run_dir = os.path.join(work, f"run-{C}-{r}")
        ours.append(timed([p0sim, "train", "--task", "uniform", "--vocab", str(V), "--d-model", str(C),
                           "--heads", str(H), "--layers", str(L), "--seq-len", str(T), "--batch", str(B),
                           "--steps", str(steps), "--lr", "1e-3", "--clip", "1", "--probe-every", "0",
                           "--threads", "1", "--out", run_dir]))
        theirs.append(timed([py, peer, "run", "--config", f"{V},{C},{H},{T},{B},{L}", "--steps", str(steps)],
                            env=peer_env))
    out.append({"C": C, "T": T, "B": B, "steps": steps, "p0sim_s": statistics.median(ours),
                "torch_s": statistics.median(theirs)})
print(json.dumps(out))
PYEOF

"$py" - "$work/bench.json" "$work/emergence.txt" "$work/process.json" "$reps" <<'PYEOF'
import json, re, sys
bench = json.load(open(sys.argv[1]))
emergence = open(sys.argv[2]).read()
process = json.load(open(sys.argv[3]))
reps = sys.argv[4]
med = {}  # per benchmark: the median over repetitions, or the one run when REPS=1 (no aggregates)
for b in bench["benchmarks"]:
    if b.get("run_type") != "aggregate" and not b.get("error_occurred"):
        med.setdefault(b["run_name"], b)
for b in bench["benchmarks"]:
    if b.get("aggregate_name") == "median":
        med[b["run_name"]] = b
def find(pattern):
    hits = [b for name, b in med.items() if re.search(pattern, name)]
    if len(hits) != 1:
        raise SystemExit(f"figures: expected one benchmark matching {pattern}, found {len(hits)}")
    return hits[0]
def ms(pattern):
    b = find(pattern)
    scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
    return b["real_time"] * scale
step128, step128_2 = ms(r"BM_parallel_step/C:128/.*/threads:1/"), ms(r"BM_parallel_step/C:128/.*/threads:2/")
step32 = ms(r"BM_parallel_step/C:32/H:4/T:16/B:64/threads:1/")
floor128, floor32 = ms(r"BM_step_gemm_floor/C:128/"), ms(r"BM_step_gemm_floor/C:32/")
text1, text2 = ms(r"BM_parallel_step_text/threads:1"), ms(r"BM_parallel_step_text/threads:2")
gflops128 = find(r"BM_parallel_step/C:128/.*/threads:1/")["GFLOP/s"]
peak = {}
for name, b in med.items():
    m = re.match(r"BM_fma_peak_(\d+)/", name)
    if m and "GFLOP/s" in b:
        peak[m.group(1)] = max(peak.get(m.group(1), 0.0), b["GFLOP/s"])
def emerge(point):
    m = re.search(rf"^d={point[0]},T={point[1]}\s.*?(\d+\.\d+) \[\s*(\d+\.\d+)\]\s+\S+/\S+$", emergence, re.M)
    return f"{float(m.group(1)):.2f}x (CPU time {float(m.group(2)):.2f}x)" if m else "not measured"
proc = {p["C"]: p["torch_s"] / p["p0sim_s"] for p in process}
rows = [
    ("whole step / GEMMs alone, C=128", f"{step128 / floor128:.2f}x ({step128:.2f} / {floor128:.2f} ms)", "≤ 1.20x"),
    ("whole step / GEMMs alone, C=32", f"{step32 / floor32:.2f}x ({step32:.3f} / {floor32:.3f} ms)", "≤ 1.45x"),
    ("whole-step FLOP rate / peak FMA rate, C=128",
     " / ".join(f"{100 * gflops128 / p:.0f}% of {bits}-bit ({p:.1f} GFLOP/s)" for bits, p in sorted(peak.items()))
     + f"; step {gflops128:.1f} GFLOP/s", "≥ 60%"),
    ("emergence vs PyTorch+OpenBLAS, (d=64, T=32)", emerge((64, 32)), "≥ 3x"),
    ("emergence vs PyTorch+OpenBLAS, (d=32, T=16)", emerge((32, 16)), "≥ 5x"),
    ("steps/s vs PyTorch+OpenBLAS, whole process, (C=32,T=16,B=16) / (C=64,T=32,B=32) / (C=128,T=64,B=32)",
     " / ".join(f"{proc[c]:.2f}x" for c in (32, 64, 128)), "≥ 6x / 3x / 1.8x"),
    ("two threads vs one, one run, C=128", f"{step128 / step128_2:.2f}x", "≥ 1.8x"),
    ("two threads vs one, one run, text config (L=4, C=256, H=8, T=256, B=16)", f"{text1 / text2:.2f}x ({text1:.0f} / {text2:.0f} ms)", "≥ 1.8x"),
]
print(f"medians of {reps} repetitions; ratios measured side by side in this run")
print("| measure | measured | goal |\n|---|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
print("\nwhole processes (s, median):")
for p in process:
    print(f"  C={p['C']} T={p['T']} B={p['B']} {p['steps']} steps: p0sim {p['p0sim_s']:.2f} s, torch {p['torch_s']:.2f} s")
print("\nemergence_peer.sh:\n" + emergence)
PYEOF
