#!/usr/bin/env python3
"""Guo et al.'s three Bigram-Backcopy curves for p0sim runs, next to the numbers of their figures.

  python3 scripts/guo_figures.py OUT_DIR NAME=RUN_DIR [NAME=RUN_DIR ...]

For each run (a `p0sim train` directory with probes), over training, at head 0 of the last layer
(the layer where the dormant head forms, in 1 and 3 layers alike):
  attention to position 0 from the non-trigger queries (heads.csv attn_to_0_rest: the dormant head),
  |W_o v_0| (heads.csv value_out_norm_0: the value drain);
and the norm of position 0's residual after block 0 (trace.csv p0_norm: the residual peak, as Guo
et al. plot it) and its largest ratio over blocks to the median norm elsewhere (p0_norm_ratio).
Writes OUT_DIR/curves.gp (a gnuplot script holding every number it draws; `gnuplot curves.gp`
redraws curves.png) and OUT_DIR/table.md (the last probe of each run). Guo et al.'s values, decoded
from their repository's saved figure data (docs/literature/guo2024_bigram_backcopy.md), are drawn as
points: 1-layer Adam (steps 0, 140, 300, 1000) and the 3-layer BOS residual after layer 0 with Adam
and with SGD (steps 0, 1000, 2000).
"""
import csv
import json
import os
import subprocess
import sys

GUO_1L_ADAM = {"step": [0, 140, 300, 1000], "attn": [0.022, 0.054, 0.56, 0.78], "value": [5.2, 9.1, 5.5, 3.5],
               "res": [24.3, 30.5, 25.4, 27.0]}
GUO_3L_RES0 = {"Adam": ([0, 1000, 2000], [24, 34, 43]), "SGD": ([0, 1000, 2000], [24.4, 29, 26])}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(text):
    return float(text) if text not in ("", None) else float("nan")


def load(run_dir):
    trace = read_csv(os.path.join(run_dir, "trace.csv"))
    last = str(max(int(r["layer"]) for r in trace))
    heads = [r for r in read_csv(os.path.join(run_dir, "heads.csv")) if r["layer"] == last and r["head"] == "0"]
    with open(os.path.join(run_dir, "summary.json")) as f:
        summary = json.load(f)
    layers = sorted({int(r["layer"]) for r in trace})
    return {
        "step": [int(r["step"]) for r in heads],
        "attn": [number(r["attn_to_0_rest"]) for r in heads],
        "value": [number(r["value_out_norm_0"]) for r in heads],
        "p0_norm": {l: [number(r["p0_norm"]) for r in trace if int(r["layer"]) == l] for l in layers},
        "rest_norm": {l: [number(r["rest_norm"]) for r in trace if int(r["layer"]) == l] for l in layers},
        "max_ratio": [max(number(r["p0_norm_ratio"]) for r in trace if int(r["step"]) == s)
                      for s in sorted({int(r["step"]) for r in trace})],
        "accuracy": [number(r["accuracy"]) for r in trace if int(r["layer"]) == 0],
        "loss": [number(r["loss"]) for r in trace if int(r["layer"]) == 0],
        "config": summary["config"],
    }


def datablock(name, columns):
    lines = [f"${name} << EOD"]
    for row in zip(*columns):
        lines.append(" ".join(repr(v) for v in row))
    lines.append("EOD")
    return "\n".join(lines)


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = argv[1]
    runs = []
    for arg in argv[2:]:
        name, run_dir = arg.split("=", 1)
        for f in ("heads.csv", "trace.csv", "summary.json"):
            if not os.path.isfile(os.path.join(run_dir, f)):
                print(f"guo_figures.py: {run_dir} has no {f} (a p0sim train directory with probes is needed)",
                      file=sys.stderr)
                return 2
        runs.append((name, load(run_dir)))
    os.makedirs(out, exist_ok=True)

    gp = ["# Guo et al.'s Bigram-Backcopy curves: p0sim runs (lines) and their figures' numbers (points).",
          "# Written by scripts/guo_figures.py; `gnuplot curves.gp` redraws curves.png.",
          "set terminal pngcairo size 1800,450 font ',10' noenhanced", "set output 'curves.png'",
          "set multiplot layout 1,4", "set key top left font ',8'", "set grid", "set xlabel 'step'"]
    gp.append(datablock("guo1", [GUO_1L_ADAM["step"], GUO_1L_ADAM["attn"], GUO_1L_ADAM["value"], GUO_1L_ADAM["res"]]))
    for label, (steps, values) in GUO_3L_RES0.items():
        gp.append(datablock(f"guo3{label}", [steps, values]))
    for i, (name, r) in enumerate(runs):
        cols = [r["step"], r["attn"], r["value"], r["p0_norm"][0], r["max_ratio"]]
        gp.append(datablock(f"run{i}", cols))
    panels = [("attention to position 0 from non-trigger queries (last layer)", 2, False),
              ("|W_o v_0| (last layer): the value drain", 3, True),
              ("|h_0| after block 0: the residual peak", 4, True),
              ("max over blocks of |h_0| / median |h_t|", 5, False)]
    for title, col, log in panels:
        plots = [f"$run{i} using 1:{col} with lines lw 2 title '{name}'" for i, (name, _) in enumerate(runs)]
        if col in (2, 3, 4):
            plots.append(f"$guo1 using 1:{col} with points pt 7 ps 1.2 title 'Guo 1L Adam'")
        if col == 4:
            plots += [f"$guo3{label} using 1:2 with points pt {5 + k} ps 1.2 title 'Guo 3L {label}'"
                      for k, label in enumerate(GUO_3L_RES0)]
        gp.append(f"set title '{title}'")
        gp.append("set logscale y" if log else "unset logscale y")
        gp.append("plot " + ", \\\n     ".join(plots))
    gp.append("unset multiplot")
    gp_path = os.path.join(out, "curves.gp")
    with open(gp_path, "w") as f:
        f.write("\n".join(gp) + "\n")
    subprocess.run(["gnuplot", "curves.gp"], cwd=out, check=True)

    table = ["| run | layers | attn | optimizer | lr | steps | probe loss (nats) | backcopy accuracy | "
             "attn to 0 from non-triggers | \\|W_o v_0\\| | \\|h_0\\| per block | median \\|h_t\\| per block |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for name, r in runs:
        c = r["config"]
        last = -1
        p0 = " / ".join(f"{r['p0_norm'][l][last]:.1f}" for l in sorted(r["p0_norm"]))
        rest = " / ".join(f"{r['rest_norm'][l][last]:.1f}" for l in sorted(r["rest_norm"]))
        table.append(f"| {name} | {c['layers']} | {c['attn']} | {c['optimizer']} | {c['lr']:g} | {r['step'][last]} | "
                     f"{r['loss'][last]:.3f} | {r['accuracy'][last]:.3f} | {r['attn'][last]:.3f} | "
                     f"{r['value'][last]:.2f} | {p0} | {rest} |")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(table) + "\n")
    print(f"wrote {gp_path}, curves.png and table.md in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
