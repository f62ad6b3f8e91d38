#!/usr/bin/env python3
"""Markdown tables from bench_gemm_libs.cpp's JSON output (--benchmark_out, aggregates).

usage: gemm_libs_table.py DEFAULT.json [AVX2.json AVX512.json]
DEFAULT is a run with every library on the path it picks itself; AVX2 and AVX512 are runs with the
libraries pinned to an AVX2 and an AVX-512 path (OPENBLAS_CORETYPE, BLIS_ARCH_TYPE, LIBXSMM_TARGET;
Eigen by the build's flags), each holding the libraries it measured (several runs' "benchmarks"
lists may be concatenated into one file). Prints the peak FMA rates, the per-shape medians (GFLOP/s), the GEMM time per
training step each library would give (sum over shapes of calls_per_step * flop / rate), the
repetitions' spread, and whether the result bits agree between calls and between paths.
"""
import json
import re
import statistics
import sys

LIBS = ["eigen", "openblas", "blis", "libxsmm"]
NAME = {"eigen": "Eigen (sim/gemm.hpp)", "openblas": "OpenBLAS", "blis": "BLIS", "libxsmm": "libxsmm"}
SHAPE = re.compile(r"sgemm/([^/]+)/([^/]+)/(\w\w)/m:(\d+)/n:(\d+)/k:(\d+)/(\w+)$")


def load(path):
    with open(path) as f:
        doc = json.load(f)
    rows = {}  # (run_name, aggregate) -> benchmark entry
    for b in doc["benchmarks"]:
        rows[(b["run_name"], b.get("aggregate_name", "")) ] = b
    return doc["context"], rows


def shapes(rows):
    seen = []
    for (run, agg) in rows:
        m = SHAPE.match(run)
        if m and agg == "median":
            key = m.groups()[:6]
            if key not in seen:
                seen.append(key)
    return seen


def get(rows, key, lib, agg="median", field="GFLOP/s"):
    b = rows.get(("sgemm/%s/%s/%s/m:%s/n:%s/k:%s/%s" % (key + (lib,)), agg))
    if b is None or b.get("error_occurred"):
        return None
    return b.get(field) if field != "label" else b.get("label", "")


def fmt(x):
    return "-" if x is None else ("%.1f" % x)


def libs_in(rows):
    return [lib for lib in LIBS if any(run.endswith("/" + lib) for (run, agg) in rows)]


def path_of(rows, lib):
    for (run, agg), b in rows.items():
        if run.endswith("/" + lib) and agg == "median" and b.get("label"):
            return b["label"].split(" ")[0]
    return "?"


def main(argv):
    ctx, rows = load(argv[1])
    pinned = [load(p)[1] for p in argv[2:4]]
    keys = shapes(rows)
    out = []
    w = out.append
    # peak FMA
    for bits in ("256", "512"):
        best = None
        for (run, agg), b in rows.items():
            if run.startswith("BM_fma_peak_%s/" % bits) and agg == "median":
                if best is None or b["GFLOP/s"] > best[1]:
                    best = (run, b["GFLOP/s"])
        if best:
            w("- peak FP32 FMA, %s-bit: **%.1f GFLOP/s** (%s, median)" % (bits, best[1], best[0].split("/")[1]))
    w("")
    w("### Per shape, each library on the path it picks itself (GFLOP/s, medians)")
    w("Paths: " + ", ".join(path_of(rows, lib) for lib in LIBS))
    w("")
    w("| config | product | case | m | n | k | calls/step | " + " | ".join(NAME[l] for l in LIBS) + " |")
    w("|---|---|---|---:|---:|---:|---:|" + "---:|" * len(LIBS))
    for key in keys:
        rates = [get(rows, key, lib) for lib in LIBS]
        best = max((r for r in rates if r is not None), default=None)
        cells = [("**%s**" % fmt(r)) if r is not None and r == best else fmt(r) for r in rates]
        calls = get(rows, key, "eigen", field="calls_per_step")
        w("| %s | %s | %s | %s | %s | %s | %s | " % (key + ("%g" % calls if calls is not None else "-",)) + " | ".join(cells) + " |")
    if pinned:
        w("")
        w("### Per shape, each library pinned to an AVX2 and an AVX-512 path (GFLOP/s, medians)")
        heads = []
        for i, r in enumerate(pinned):
            for lib in libs_in(r):
                heads.append("%s %s" % (NAME[lib].split(" ")[0], path_of(r, lib).split(":")[1]))
        w("| config | product | case | " + " | ".join(heads) + " |")
        w("|---|---|---|" + "---:|" * len(heads))
        for key in keys:
            cells = [fmt(get(r, key, lib)) for r in pinned for lib in libs_in(r)]
            w("| %s | %s | %s | " % key[:3] + " | ".join(cells) + " |")
    # weighted: GEMM milliseconds per training step, linear layers and attention products apart
    w("")
    w("### GEMM time per training step (ms, one thread): sum of calls/step x flop / median rate")
    runs = [("default", rows)] + [(("AVX2", "AVX-512")[i], r) for i, r in enumerate(pinned)]
    heads = ["%s %s" % (NAME[l].split(" ")[0], n) for n, r in runs for l in libs_in(r)]
    w("| config | products | " + " | ".join(heads) + " |")
    w("|---|---|" + "---:|" * len(heads))
    configs = []
    for key in keys:
        if key[0] not in configs and key[0] != "square":
            configs.append(key[0])
    for cfg in configs:
        for part, pred in (("linear", lambda op: not op.startswith("att")), ("attention", lambda op: op.startswith("att"))):
            cells = []
            for n, r in runs:
                for lib in libs_in(r):
                    t, ok = 0.0, True
                    for key in keys:
                        if key[0] != cfg or not pred(key[1]):
                            continue
                        rate, calls = get(r, key, lib), get(r, key, lib, field="calls_per_step")
                        if rate is None:
                            ok = False
                            continue
                        t += calls * 2.0 * int(key[3]) * int(key[4]) * int(key[5]) / (rate * 1e9)
                    cells.append("%.3f" % (t * 1e3) if ok else "-")
            w("| %s | %s | " % (cfg, part) + " | ".join(cells) + " |")
    # spread and bits
    w("")
    w("### Spread of the repetitions (coefficient of variation of GFLOP/s), default run")
    for lib in LIBS:
        cvs = [get(rows, key, lib, agg="cv") for key in keys]
        cvs = [c for c in cvs if c is not None]
        if cvs:
            w("- %s: median %.1f%%, 90th percentile %.1f%%, max %.1f%% over %d shapes" % (
                NAME[lib], 100 * statistics.median(cvs), 100 * sorted(cvs)[int(0.9 * (len(cvs) - 1))], 100 * max(cvs), len(cvs)))
    w("")
    w("### Bits")
    for lib in LIBS:
        same = [get(rows, key, lib, field="same_bits_2calls") for key in keys]
        same = [s for s in same if s is not None]
        line = "- %s: two calls bitwise identical on %d/%d shapes" % (NAME[lib], sum(1 for s in same if s == 1), len(same))
        base = {key: get(rows, key, lib, field="label") for key in keys}
        for i, r in enumerate(pinned):
            if lib not in libs_in(r):
                continue
            n, eq = 0, 0
            for key in keys:
                a, b = base[key], get(r, key, lib, field="label")
                if a and b:
                    n += 1
                    eq += a.split("bits:")[1] == b.split("bits:")[1]
            line += "; default (%s) vs %s: same bits on %d/%d" % (path_of(rows, lib), path_of(r, lib), eq, n)
        w(line)
    def same_bits(ra, la, rb, lb):
        n = eq = 0
        for key in keys:
            a, b = get(ra, key, la, field="label"), get(rb, key, lb, field="label")
            if a and b:
                n += 1
                eq += a.split("bits:")[1] == b.split("bits:")[1]
        return "%d/%d" % (eq, n)
    if len(pinned) == 2:
        w("- AVX2 vs AVX-512 path, same bits: " + "; ".join(
            "%s (%s vs %s) %s" % (NAME[lib].split(" ")[0], path_of(pinned[0], lib), path_of(pinned[1], lib),
                                  same_bits(pinned[0], lib, pinned[1], lib))
            for lib in LIBS if lib in libs_in(pinned[0]) and lib in libs_in(pinned[1])))
    others = [(n, r, lib) for n, r in runs for lib in libs_in(r) if lib != "eigen"]
    w("- Eigen (%s) vs the other libraries, same bits: " % path_of(rows, "eigen") + "; ".join(
        "%s %s" % (path_of(r, lib), same_bits(rows, "eigen", r, lib)) for n, r, lib in others))
    err = [get(rows, key, lib, field="max_rel_err") for key in keys for lib in LIBS]
    err = [e for e in err if e is not None]
    w("- largest relative error against the double reference, any library and shape: %.2e" % max(err))
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv)
