#!/usr/bin/env python3
"""The text task's phase diagram: context length T x training tokens, from the runs of
configs/text_phase.toml (a `p0sim sweep ... --keep-runs`, possibly in shards, or `p0sim experiment`).

  python3 scripts/text_phase.py OUT_DIR RUNS_DIR [RUNS_DIR ...]

RUNS_DIR holds <variant>/seed-<i>/ or variant=<variant>/seed-<i>/ run directories (a sweep's runs/,
an experiment's runs/, e.g. configs/text_controls.toml's). Every probe of every run is one cell
sample: its variant (columns ordered by T, then by name) and the tokens it had trained on (step x
batch x T). Per probe, over the model's layers:
  sink_1          Gu et al.'s Sink_1 with eps = 0.3: the fraction of all heads (every layer) whose mean
                  attention to key 0 over the queries i >= 1 exceeds eps (trace.csv sink_1 is the
                  fraction per layer; their mean over layers is the fraction of all heads)
  p0_norm_ratio   the largest over blocks of |h_0| / median |h_t| (t >= 1)
  p0_cos          at the block of that largest ratio: the mean pairwise cosine of position 0's states
  massive_p0      the largest over blocks of max |h_0,i| / median |h_t,i| (the massive-activation ratio at P0)
  massive_rest    the same away from P0 (t >= 1)
  heldout_bpb     the probe batch's loss (held-out documents) in bits per byte
Writes OUT_DIR/heat_<metric>.gp and .png (mean over seeds per cell; `gnuplot heat_<metric>.gp`
redraws it), OUT_DIR/curves.gp and .png (every metric over training tokens, one line per variant: the
mean over seeds, the same cells as the heat maps), OUT_DIR/cells.csv (every cell: T, tokens, seeds,
mean), OUT_DIR/table.md (the last
probe per variant: mean [95% bootstrap percentile interval] over seeds; the corpus's held-out bits per
byte and unigram entropy from summary.json) and OUT_DIR/seeds.md (one row per run, the figures a
reader checks seed by seed: sinking heads and the most position-0-bound head at the last probe and
over training, position 0's ratio at the end and at its peak, the probes meeting the high-norm
criterion).
"""
import csv
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interval import bootstrap  # noqa: E402
from run_csv import number, read_csv  # noqa: E402
from script_args import Parser, directory  # noqa: E402
from verdict_summary import HIGH_NORM_COS, HIGH_NORM_RATIO, is_high_norm  # noqa: E402

METRICS = [
    ("sink_1", "Sink_1 (eps 0.3): fraction of heads sinking on position 0", (0.0, 1.0)),
    ("p0_norm_ratio", "max over blocks of p0_norm_ratio", None),
    ("p0_cos", "p0_cos at the block of the largest ratio", (-1.0, 1.0)),
    ("massive_p0", "massive-activation ratio at P0 (max over blocks)", None),
    ("massive_rest", "massive-activation ratio away from P0 (max over blocks)", None),
    ("heldout_bpb", "held-out bits per byte (probe batch)", None),
]
def rows_by_step(path):
    """A per-probe CSV (trace.csv: a row per layer; heads.csv: a row per head) grouped by its step."""
    by_step = {}
    for r in read_csv(path):
        by_step.setdefault(int(r["step"]), []).append(r)
    return by_step


def probes_of(run_dir):
    """One dict per probe step: the metrics above, from trace.csv."""
    out = []
    for step, rows in sorted(rows_by_step(os.path.join(run_dir, "trace.csv")).items()):
        ratios = [number(r["p0_norm_ratio"]) for r in rows]
        top = max(range(len(rows)), key=lambda i: ratios[i])
        out.append({
            "step": step,
            "sink_1": sum(number(r["sink_1"]) for r in rows) / len(rows),
            "p0_norm_ratio": ratios[top],
            "p0_cos": number(rows[top]["p0_cos"]),
            # at any block, not only the largest ratio's: a block under it may hold the criterion
            "high_norm": any(is_high_norm(number(r["p0_norm_ratio"]), number(r["p0_cos"])) for r in rows),
            "massive_p0": max(number(r["massive_ratio"]) for r in rows),
            "massive_rest": max(number(r["massive_ratio_rest"]) for r in rows),
            "heldout_bpb": number(rows[0]["loss"]) / math.log(2.0),
            # per layer, the fraction of its heads whose attention to key 0 (mean over queries and
            # windows) exceeds eps: the count a BOS control's sink is judged by
            "sink_rate_sum": sum(number(r.get("sink_rate")) for r in rows),
        })
    return out


def top_head(rows):
    """The (attention to key 0, layer, head) of the head that attends to key 0 most among heads.csv rows."""
    return max((number(r["attn_to_0"]), int(r["layer"]), int(r["head"])) for r in rows)


def seed_row(run, probes):
    """One run's line of seeds.md. Sinking heads: trace.csv's sink_rate (per layer, the fraction of heads
    whose attention to key 0 exceeds eps) as a count; the head columns read heads.csv's attn_to_0 (mean
    over all queries of the attention to key 0); either is blank for a run without it."""
    c, last = run["summary"]["config"], probes[-1]
    heads_per_layer = c.get("heads", 1)
    n_heads = heads_per_layer * c.get("layers", 1)
    sinking = last["sink_rate_sum"] * heads_per_layer
    sinking = f"{round(sinking)} of {n_heads}" if math.isfinite(sinking) else "–"
    peak = max(probes, key=lambda p: p["p0_norm_ratio"])
    held = sum(p["high_norm"] for p in probes)
    bpb = (run["summary"].get("text") or {}).get("heldout_bits_per_byte")
    head_last = head_any = "–"
    heads_path = os.path.join(run["dir"], "heads.csv")
    if os.path.exists(heads_path):
        by_step = rows_by_step(heads_path)
        a, layer, head = top_head(by_step[max(by_step)])
        head_last = f"{a:.3f} (layer {layer}, head {head})"
        # step 0 (the initialisation) excluded: attention there is near uniform
        (a, layer, _), step = max((top_head(rows), step) for step, rows in by_step.items() if step > 0)
        head_any = f"{a:.3f} (step {step}, layer {layer})"
    return (f"| {run['variant']} | {run['seed'].split('-')[1]} | {'–' if bpb is None else f'{bpb:.3f}'} | "
            f"{sinking} | {head_last} | {head_any} | {last['p0_norm_ratio']:.2f} ({last['p0_cos']:.2f}) | "
            f"{peak['p0_norm_ratio']:.2f} (step {peak['step']}, {peak['p0_cos']:.2f}) | {held} of {len(probes)} | "
            f"{last['massive_p0']:.1f} / {last['massive_rest']:.1f} |")


def find_runs(roots):
    runs = []
    for root in roots:
        for variant in sorted(os.listdir(root)):
            vdir = os.path.join(root, variant)
            for seed in sorted(os.listdir(vdir)):
                rdir = os.path.join(vdir, seed)
                if not re.fullmatch(r"seed-\d+", seed) or not os.path.exists(os.path.join(rdir, "summary.json")):
                    continue
                with open(os.path.join(rdir, "summary.json")) as f:
                    summary = json.load(f)
                runs.append({"variant": variant.split("=", 1)[-1], "seed": seed, "dir": rdir, "summary": summary})
    return runs


def cell_mean(cell, variant, tokens):
    """A cell's mean over seeds as gnuplot data ("nan" where the variant has no probe at these tokens)."""
    xs = cell.get((variant, tokens))
    return f"{sum(xs) / len(xs):.6g}" if xs else "nan"


def write_heatmap(out_dir, key, title, columns, token_values, cell, value_range):
    lines = [f"# scripts/text_phase.py: {key}, mean over seeds. Redraw in this directory: gnuplot heat_{key}.gp",
             f'if (!exists("outfile")) outfile = "heat_{key}.png"',
             'set terminal pngcairo noenhanced size 640,480 font "sans,10"', "set output outfile",
             "set palette rgb 33,13,10", f'set title "{title}"', 'set xlabel "variant (T = context length in bytes)"',
             'set ylabel "training tokens (millions)"', "$d << EOD"]
    for j, tok in enumerate(token_values):
        lines.append(" ".join(cell_mean(cell, v, tok) for v in columns))
    lines += ["EOD", f"set xrange [-0.5:{len(columns) - 0.5}]", f"set yrange [-0.5:{len(token_values) - 0.5}]",
              "set xtics (" + ", ".join(f'"{v}" {i}' for i, v in enumerate(columns)) + ")",
              "set ytics (" + ", ".join(f'"{tok / 1e6:.1f}" {j}' for j, tok in enumerate(token_values) if j % 2 == 0) + ")"]
    if value_range:
        lines.append(f"set cbrange [{value_range[0]}:{value_range[1]}]")
    lines += ["plot $d matrix with image notitle, \\",
              '     $d matrix using 1:2:($3 == $3 ? sprintf("%.2f", $3) : "-") with labels font ",7" notitle', ""]
    path = os.path.join(out_dir, f"heat_{key}.gp")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    subprocess.run(["gnuplot", f"heat_{key}.gp"], cwd=out_dir, check=True)


def write_curves(out_dir, columns, token_values, cells):
    """One panel per metric, x = training tokens, a line per variant (its mean over seeds per probe)."""
    lines = ["# scripts/text_phase.py: each metric over training tokens, mean over seeds per variant.",
             "# Redraw in this directory: gnuplot curves.gp",
             'if (!exists("outfile")) outfile = "curves.png"',
             'set terminal pngcairo noenhanced size 1200,760 font "sans,10"', "set output outfile",
             "set key top right font \",8\"", 'set xlabel "training tokens (millions)"', "set grid",
             'set datafile missing "nan"']
    for key, _, _ in METRICS:
        lines.append(f"${key} << EOD")
        lines.append("# tokens_M " + " ".join(columns))
        for tok in token_values:
            lines.append(f"{tok / 1e6:.6g} " + " ".join(cell_mean(cells[key], v, tok) for v in columns))
        lines.append("EOD")
    lines.append(f'set multiplot layout 2,{(len(METRICS) + 1) // 2} title "text task: probes over training (mean over seeds)"')
    for key, title, value_range in METRICS:
        lines.append(f'set title "{title}"')
        lines.append(f"set yrange [{value_range[0]}:{value_range[1]}]" if value_range else "set autoscale y")
        series = [f'${key} using 1:{i + 2} with linespoints lw 2 pt 7 ps 0.5 title "{v}"' for i, v in enumerate(columns)]
        lines.append("plot " + ", \\\n     ".join(series))
    lines += ["unset multiplot", ""]
    with open(os.path.join(out_dir, "curves.gp"), "w") as f:
        f.write("\n".join(lines))
    subprocess.run(["gnuplot", "curves.gp"], cwd=out_dir, check=True)


def main(argv):
    parser = Parser(__doc__)
    parser.add_argument("OUT_DIR", help="where the tables and plots go (created)")
    parser.add_argument("RUNS_DIR", nargs="+", type=directory, help="a directory of <variant>/seed-<i>/ runs")
    args = parser.parse_args(argv[1:])
    out_dir, roots = args.OUT_DIR, args.RUNS_DIR
    runs = find_runs(roots)
    if not runs:
        print(f"RUNS_DIR: no run directories (<variant>/seed-<i>/summary.json) under {' '.join(roots)}", file=sys.stderr)
        return 2
    os.makedirs(out_dir, exist_ok=True)
    cells = {key: {} for key, _, _ in METRICS}
    final = {}
    corpus = None
    seq_len = {}
    for run in runs:
        c = run["summary"]["config"]
        T, B, v = c["seq_len"], c["batch"], run["variant"]
        seq_len[v] = T
        probes = probes_of(run["dir"])
        for p in probes:
            tokens = p["step"] * B * T
            for key, _, _ in METRICS:
                if math.isfinite(p[key]):
                    cells[key].setdefault((v, tokens), []).append(p[key])
        last = dict(probes[-1])
        text = run["summary"].get("text") or {}
        last["summary_bpb"] = text.get("heldout_bits_per_byte")
        corpus = corpus or text
        final.setdefault(v, []).append((run["seed"], last, run["summary"]["steps"] * B * T))
        run["seed_row"] = seed_row(run, probes)
    order = [r["variant"] for r in runs]
    columns = sorted(final, key=lambda v: (seq_len[v], order.index(v)))
    token_values = sorted({tok for cell in cells.values() for (_, tok) in cell})
    for key, title, value_range in METRICS:
        write_heatmap(out_dir, key, title, columns, token_values, cells[key], value_range)
    write_curves(out_dir, columns, token_values, cells)
    with open(os.path.join(out_dir, "cells.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "variant", "T", "tokens", "seeds", "mean"])
        for key, _, _ in METRICS:
            for (v, tok), xs in sorted(cells[key].items(), key=lambda kv: (columns.index(kv[0][0]), kv[0][1])):
                w.writerow([key, v, seq_len[v], tok, len(xs), f"{sum(xs) / len(xs):.9g}"])
    rows = ["| variant | T | seeds | tokens | held-out bits/byte | Sink_1 | max p0_norm_ratio | p0_cos there | massive ratio at P0 | massive ratio elsewhere |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for v in columns:
        entries = final[v]

        def cell(key, digits=3):
            m, lo, hi = bootstrap([e[1][key] for e in entries])
            return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]" if math.isfinite(lo) else f"{m:.{digits}f}"

        bpb = [e[1]["summary_bpb"] for e in entries if e[1]["summary_bpb"] is not None]
        m, lo, hi = bootstrap(bpb) if bpb else (float("nan"),) * 3
        rows.append(f"| {v} | {seq_len[v]} | {len(entries)} | {entries[0][2] / 1e6:.1f} M | {m:.3f} [{lo:.3f}, {hi:.3f}] | "
                    f"{cell('sink_1')} | {cell('p0_norm_ratio')} | {cell('p0_cos')} | {cell('massive_p0', 1)} | "
                    f"{cell('massive_rest', 1)} |")
    note = ""
    if corpus:
        note = (f"\nCorpus: {corpus.get('train_bytes')} training bytes in {corpus.get('train_documents')} documents, "
                f"{corpus.get('heldout_bytes')} held-out bytes in {corpus.get('heldout_documents')} documents; "
                f"unigram entropy {corpus.get('unigram_bits_per_byte', float('nan')):.3f} bits per byte.\n")
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write("Last probe of each run; mean [95% bootstrap percentile interval] over seeds.\n\n" + "\n".join(rows) +
                "\n" + note)
    with open(os.path.join(out_dir, "seeds.md"), "w") as f:
        f.write(f"Every run at its last probe and over training. Sinking heads: heads whose attention to key 0 (mean "
                f"over queries and probe windows) exceeds eps = 0.3 (trace.csv sink_rate, the count a BOS control is "
                f"judged by); attention to key 0: heads.csv attn_to_0, the same mean per head; high-norm criterion: "
                f"p0_norm_ratio >= {HIGH_NORM_RATIO:g} and p0_cos >= {HIGH_NORM_COS:g} at one block.\n\n"
                "| variant | seed | held-out bits/byte | sinking heads, last probe | head most on key 0, last probe | "
                "largest attention to key 0, any probe | max p0_norm_ratio, last probe (p0_cos) | peak p0_norm_ratio "
                "(step, p0_cos) | probes meeting the high-norm criterion | massive ratio at P0 / elsewhere, last probe |\n"
                "|---|---|---|---|---|---|---|---|---|---|\n")
        for v in columns:
            f.write("".join(r["seed_row"] + "\n" for r in sorted((r for r in runs if r["variant"] == v),
                                                               key=lambda r: int(r["seed"].split("-")[1]))))
    print("\n".join(rows) + "\n" + note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
