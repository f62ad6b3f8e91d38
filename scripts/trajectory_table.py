#!/usr/bin/env python3
"""How position 0's figures move over a long run: a table at chosen steps, over seeds.

  python3 scripts/trajectory_table.py OUT.md STEPS NAME=RUN_DIR[,RUN_DIR...] [NAME=...]

STEPS is a comma-separated list of probe steps (500,1000,2000,4000). Each NAME is an arm; a RUN_DIR
of seed-<i>/ runs (an experiment's runs/<variant>/) stands for all its seeds (scripts/guo_figures.py
reads runs the same way). For every arm and step: the largest p0_norm_ratio over blocks and the
p0_cos of that block (the high-norm criterion asks ratio >= 2 and cos >= 0.9 at one block), the
norm of position 0's residual after block 0 (trace.csv p0_norm: Guo et al.'s residual peak), the
largest attention to position 0 from non-trigger queries over layers (heads.csv attn_to_0_rest,
head 0), |W_o v_0| of the last layer, backcopy accuracy and probe loss. Each cell is the mean over
seeds with the range [min, max] (too few seeds for an interval to mean much), and the seeds where
the high-norm criterion holds at that step. Then, per run over all its probes: the probes where the
high-norm criterion holds (first and last step), the peak ratio, the figures at the last probe, and per
layer the probes with a sinking head (trace.csv sink_rate > 0: a head whose attention to position 0,
averaged over all queries, is above 0.3), with the peak and last attention to position 0 there.
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guo_figures import expand, number, read_csv  # noqa: E402
from script_args import Parser, arm  # noqa: E402
from verdict_summary import is_high_norm  # noqa: E402


def at_step(run_dir, step):
    """One run's figures at one probe step, or None when the run has no probe there."""
    trace = [r for r in read_csv(os.path.join(run_dir, "trace.csv")) if int(r["step"]) == step]
    if not trace:
        return None
    heads = [r for r in read_csv(os.path.join(run_dir, "heads.csv")) if int(r["step"]) == step and r["head"] == "0"]
    top = max(trace, key=lambda r: number(r["p0_norm_ratio"]))
    last_layer = str(max(int(r["layer"]) for r in heads))
    return {
        "ratio": number(top["p0_norm_ratio"]),
        "block": int(top["layer"]),
        "cos": number(top["p0_cos"]),
        "h0_block0": next(number(r["p0_norm"]) for r in trace if r["layer"] == "0"),
        "high_norm": any(is_high_norm(number(r["p0_norm_ratio"]), number(r["p0_cos"])) for r in trace),
        "attn_rest": max(number(r["attn_to_0_rest"]) for r in heads),
        "value": next(number(r["value_out_norm_0"]) for r in heads if r["layer"] == last_layer),
        "accuracy": number(trace[0]["accuracy"]),
        "loss": number(trace[0]["loss"]),
    }


def whole_run(run_dir):
    """One run over all its probes: the high-norm probes, the peak ratio, the last probe, the sinks."""
    trace = read_csv(os.path.join(run_dir, "trace.csv"))
    steps = sorted({int(r["step"]) for r in trace})
    at = {s: [r for r in trace if int(r["step"]) == s] for s in steps}
    high = [s for s in steps if any(is_high_norm(number(r["p0_norm_ratio"]), number(r["p0_cos"])) for r in at[s])]
    peak = max(trace, key=lambda r: number(r["p0_norm_ratio"]))
    last = max(at[steps[-1]], key=lambda r: number(r["p0_norm_ratio"]))
    sinks = []
    for layer in sorted({int(r["layer"]) for r in trace}):
        rows = [r for r in trace if int(r["layer"]) == layer]
        sinking = [r for r in rows if number(r.get("sink_rate")) > 0]
        if sinking:
            sinks.append(f"layer {layer}: {len(sinking)} ({sinking[0]['step']}–{sinking[-1]['step']}; peak "
                         f"{max(number(r['attn_to_0']) for r in sinking):.2f}, last {number(rows[-1]['attn_to_0']):.2f})")
    return {
        "high": f"{len(high)} of {len(steps)}" + (f" ({len(high) / len(steps):.2f})" if high else ""),
        "high_steps": f"{high[0]}–{high[-1]}" if high else "–",
        "peak": f"{number(peak['p0_norm_ratio']):.2f} (step {peak['step']}, block {peak['layer']})",
        "last": f"{number(last['p0_norm_ratio']):.2f}, cos {number(last['p0_cos']):.2f} (step {steps[-1]}, "
                f"block {last['layer']})",
        "sinks": "; ".join(sinks) if sinks else "none in any layer",
    }


def mean_and_range(values, digits):
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{sum(values) / len(values):.{digits}f} [{min(values):.{digits}f}, {max(values):.{digits}f}]"


COLUMNS = [("largest p0_norm_ratio", "ratio", 2), ("p0_cos there", "cos", 2),
           ("\\|h_0\\| after block 0", "h0_block0", 1),
           ("attention to 0 from non-triggers (largest layer)", "attn_rest", 3), ("\\|W_o v_0\\|, last layer", "value", 1),
           ("backcopy accuracy", "accuracy", 3), ("probe loss (nats)", "loss", 3)]


def steps_list(text):
    """STEPS: comma-separated non-negative integers."""
    try:
        steps = [int(s) for s in text.split(",")]
    except ValueError:
        steps = []
    if not steps or min(steps) < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of steps")
    return steps


def main(argv):
    parser = Parser(__doc__)
    parser.add_argument("OUT", help="the Markdown table written (OUT.md)")
    parser.add_argument("STEPS", type=steps_list, help="comma-separated probe steps, e.g. 500,1000,2000")
    parser.add_argument("ARM", nargs="+", type=arm, help="NAME=RUN_DIR[,RUN_DIR...]: an arm and its seeds' runs")
    args = parser.parse_args(argv[1:])
    out, steps = args.OUT, args.STEPS
    lines = ["| arm | step | seeds | " + " | ".join(c[0] for c in COLUMNS) + " | high norm (ratio >= 2, cos >= 0.9) |",
             "|---|---:|---:|" + "---|" * len(COLUMNS) + "---|"]
    arms = [(name, list(expand(dirs))) for name, dirs in args.ARM]
    for name, runs in arms:
        for step in steps:
            rows = [r for r in (at_step(d, step) for d in runs) if r]
            if not rows:
                continue
            blocks = sorted({r["block"] for r in rows})
            cells = [mean_and_range([r[key] for r in rows], digits) for _, key, digits in COLUMNS]
            cells[0] += f" (block {', '.join(map(str, blocks))})"
            lines.append(f"| {name} | {step} | {len(rows)} | " + " | ".join(cells)
                         + f" | {sum(r['high_norm'] for r in rows)}/{len(rows)} |")
    per_run = ["| arm | run | probes with the high-norm direction | steps | peak ratio | at the last probe | "
               "probes with a sinking head (attention to 0 from all queries > 0.3), per layer |",
               "|---|---|---|---|---|---|---|"]
    listed = set()  # a run named again as an arm of its own (main-seed-0=...) is listed once
    for name, runs in arms:
        for run_dir in runs:
            if os.path.realpath(run_dir) in listed:
                continue
            listed.add(os.path.realpath(run_dir))
            w = whole_run(run_dir)
            per_run.append(f"| {name} | {os.path.basename(os.path.normpath(run_dir))} | {w['high']} | {w['high_steps']} | "
                           f"{w['peak']} | {w['last']} | {w['sinks']} |")
    with open(out, "w", newline="") as f:
        f.write("Mean [min, max] over seeds at each probe step (`scripts/trajectory_table.py`).\n\n")
        f.write("\n".join(lines) + "\n")
        f.write("\nEach run over all its probes.\n\n" + "\n".join(per_run) + "\n")
    print(open(out).read())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
