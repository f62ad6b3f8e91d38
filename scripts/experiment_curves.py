"""Curves over training of an experiment's variants, from each finished run's trace.csv: per
variant, the mean over seeds and the range (lowest to highest seed) at every probe of the task
accuracy at every trigger and at the first, the probe loss, the largest sink rate over layers >= 1
(layer 0 when there is one layer) and the largest p0_norm_ratio over layers; the accuracy panels
also draw the control's content-only chance level when verdict.json has one (`control_chance`).

    python3 scripts/experiment_curves.py EXPERIMENT_DIR OUT_DIR [--variants a,b]

Writes OUT_DIR/curves.csv (variant, quantity, step, seeds, mean, min, max), curves.gp (a gnuplot
script holding every number it draws; `gnuplot curves.gp` redraws) and curves.png. A variant's
curve stops at its shortest finished run's last probe; unfinished runs (no summary.json) are left
out, each named on stderr.

When the experiment names a main variant and a control (experiment.toml's [experiment]) and both
are drawn, also OUT_DIR/matched.md: main against the control at the same probe loss, for a control
that learns less. Each main run is read where its probe loss first reaches the control's final loss
(the mean over its seeds), linear in the loss between the two probes around that point, and
compared with the control's last probe: mean [95% bootstrap percentile interval] per side, the
difference of means with its bootstrap interval, Cohen's d and the two-sided permutation p (exact
up to 200 000 splits).
"""
import csv
import json
import math
import os
import subprocess
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interval import bootstrap_difference, cell, cohens_d, permutation_p  # noqa: E402
from run_csv import datablock, number, read_csv  # noqa: E402
from script_args import Parser, directory  # noqa: E402

# (key, panel title, value of one probe from its rows by layer)
QUANTITIES = [
    ("accuracy", "task accuracy (every trigger)", lambda rows: rows[0]["accuracy"]),
    ("first_accuracy", "accuracy at the first trigger", lambda rows: rows[0]["first_accuracy"]),
    ("loss", "probe loss (nats)", lambda rows: rows[0]["loss"]),
    ("max_sink_rate", "largest sink rate, layers >= 1",
     lambda rows: max(r["sink_rate"] for r in rows[1 if len(rows) > 1 else 0:])),
    ("max_p0_norm_ratio", "largest p0_norm_ratio over layers", lambda rows: max(r["p0_norm_ratio"] for r in rows)),
]
CHANCE = {"accuracy": "trigger_accuracy", "first_accuracy": "first_trigger_accuracy"}
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]
COLUMNS = ["layer", "accuracy", "first_accuracy", "loss", "sink_rate", "p0_norm_ratio"]


def probes(run_dir):
    """{step: [row of layer 0, row of layer 1, ...]} of one run's trace.csv, the columns drawn as floats."""
    by_step = {}
    for row in read_csv(os.path.join(run_dir, "trace.csv")):
        by_step.setdefault(int(row["step"]), []).append({k: number(row.get(k)) for k in COLUMNS})
    for rows in by_step.values():
        rows.sort(key=lambda r: r["layer"])
    return by_step


def variant_runs(experiment, variant):
    root = os.path.join(experiment, "runs", variant)
    seeds = sorted((e for e in os.listdir(root) if e.startswith("seed-")), key=lambda e: int(e[5:]))
    finished = [os.path.join(root, e) for e in seeds if os.path.isfile(os.path.join(root, e, "summary.json"))]
    for e in seeds:
        if os.path.join(root, e) not in finished:
            print(f"{os.path.basename(sys.argv[0])}: {root}/{e}: left out (unfinished: no summary.json)",
                  file=sys.stderr)
    return finished


def curves(traces):
    """{quantity: (steps, seeds, mean, lo, hi)} over the runs' probes, up to the shortest run's last probe."""
    steps = sorted(set.intersection(*(set(t) for t in traces)))
    out = {}
    for key, _, value in QUANTITIES:
        cols = [[value(t[s]) for t in traces] for s in steps]
        cols = [[v for v in c if math.isfinite(v)] for c in cols]
        kept = [(s, c) for s, c in zip(steps, cols) if c]
        out[key] = ([s for s, _ in kept], [len(c) for _, c in kept], [sum(c) / len(c) for _, c in kept],
                    [min(c) for _, c in kept], [max(c) for _, c in kept])
    return out

def at_loss(trace, target):
    """Where the run's probe loss first reaches target: (rows of the probe before, rows of the first
    probe at or below it, weight of the latter, its step), linear in the loss between the two; the
    first probe alone if it is already there, the last probe (step None) if no probe reaches it."""
    steps = sorted(trace)
    k = next((i for i, s in enumerate(steps) if trace[s][0]["loss"] <= target), None)
    if k is None:
        return trace[steps[-1]], trace[steps[-1]], 1.0, None
    now = trace[steps[k]]
    if k == 0:
        return now, now, 1.0, steps[0]
    before = trace[steps[k - 1]]
    return before, now, (before[0]["loss"] - target) / (before[0]["loss"] - now[0]["loss"]), steps[k]


def interpolate(point, value):
    before, now, w, _ = point
    return value(before) + w * (value(now) - value(before))


def matched_markdown(main, control, main_traces, control_traces):
    """matched.md's text: main at the control's final probe loss against the control at its end."""
    control_last = [t[max(t)] for t in control_traces]
    target = sum(rows[0]["loss"] for rows in control_last) / len(control_last)
    points = [at_loss(t, target) for t in main_traces]
    steps = [point[3] for point in points]
    reached = [s for s in steps if s is not None]
    where = f"first probe at or below it at steps {min(reached)}–{max(reached)}" if reached else "none"
    missed = len(steps) - len(reached)
    lines = [f"# {main} against {control} at the same probe loss",
             "",
             f"Each {main} run where its probe loss first reaches {control}'s final loss, {target:.4f} nats (the "
             f"mean over its {len(control_traces)} seeds), linear in the loss between the two probes around it "
             f"({where}, of {max(max(t) for t in main_traces)} steps"
             + (f"; {missed} run(s) never reach it and are read at their last probe" if missed else "") +
             f"); {control} at its last probe. Mean [95% bootstrap percentile interval] over seeds; difference "
             "of means with its bootstrap interval, Cohen's d, two-sided permutation p. Written by "
             "scripts/experiment_curves.py.",
             "",
             f"| quantity | {main} at its end | {main} at the matched loss | {control} at its end | "
             "difference (matched − control) | d | p |",
             "|---|---|---|---|---|---|---|"]
    for key, title, value in QUANTITIES:
        end = [value(t[max(t)]) for t in main_traces]
        at = [interpolate(point, value) for point in points]
        ctl = [value(rows) for rows in control_last]
        if not all(math.isfinite(x) for x in at + ctl):
            continue  # a quantity this task does not define (first-trigger accuracy on text)
        diff, lo, hi = bootstrap_difference(at, ctl)
        lines.append(f"| {title} | {cell(end, 3)} | {cell(at, 3)} | {cell(ctl, 3)} | {diff:.3f} [{lo:.3f}, "
                     f"{hi:.3f}] | {cohens_d(at, ctl):.2f} | {permutation_p(at, ctl):.2g} |")
    return "\n".join(lines) + "\n"


def main(argv):
    parser = Parser(__doc__)
    parser.add_argument("EXPERIMENT_DIR", type=directory, help="an experiment's directory (experiment.toml, runs/)")
    parser.add_argument("OUT_DIR", help="where curves.csv, curves.gp and curves.png go (created)")
    parser.add_argument("--variants", help="comma-separated variants to draw (default: every one in runs/)")
    args = parser.parse_args(argv[1:])
    runs_root = os.path.join(args.EXPERIMENT_DIR, "runs")
    if not os.path.isdir(runs_root):
        parser.error(f"EXPERIMENT_DIR: '{args.EXPERIMENT_DIR}' has no runs/ directory")
    present = sorted(os.listdir(runs_root))
    variants = args.variants.split(",") if args.variants else present
    for v in variants:
        if v not in present:
            parser.error(f"--variants: '{v}' is not a variant of {args.EXPERIMENT_DIR} (it has {', '.join(present)})")
    data, traces = {}, {}
    for v in variants:
        runs = variant_runs(args.EXPERIMENT_DIR, v)
        if runs:
            traces[v] = [probes(r) for r in runs]
            data[v] = curves(traces[v])
    if not data:
        parser.error(f"EXPERIMENT_DIR: '{args.EXPERIMENT_DIR}' has no finished run of {', '.join(variants)}")
    chance = {}
    verdict = os.path.join(args.EXPERIMENT_DIR, "verdict.json")
    if os.path.isfile(verdict):
        with open(verdict) as f:
            chance = json.load(f).get("control_chance", {})
    os.makedirs(args.OUT_DIR, exist_ok=True)
    with open(os.path.join(args.OUT_DIR, "curves.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["variant", "quantity", "step", "seeds", "mean", "min", "max"])
        for v, qs in data.items():
            for key, _, _ in QUANTITIES:
                for row in zip(*qs[key]):
                    w.writerow([v, key, *row])
    gp = ["# Curves over training of the variants of " + os.path.basename(os.path.normpath(args.EXPERIMENT_DIR)) +
          ": mean over seeds (line) and the range over seeds (band).",
          "# Written by scripts/experiment_curves.py; `gnuplot curves.gp` redraws curves.png.",
          "set terminal pngcairo size 1500,900 font ',10' noenhanced", "set output 'curves.png'",
          "set multiplot layout 2,3", "set key top left font ',8'", "set xlabel 'step'",
          "set style fill transparent solid 0.2 noborder"]
    # a quantity the task does not define (first-trigger accuracy on text) gets no panel
    drawn = [q for q in QUANTITIES if any(data[v][q[0]][0] for v in data)]
    for i, v in enumerate(data):
        for key, _, _ in drawn:
            steps, _, mean, lo, hi = data[v][key]
            gp.append(datablock(f"d{i}_{key}", [steps, mean, lo, hi]))
    for key, title, _ in drawn:
        # the legend on the accuracy panels, which also name the chance level
        gp.append(f"set title '{title}'")
        gp.append("set key bottom right font ',8'" if key in CHANCE else "unset key")
        plots = []
        for i, v in enumerate(data):
            c = COLOURS[i % len(COLOURS)]
            seeds = max(data[v][key][1], default=0)
            plots.append(f"$d{i}_{key} using 1:3:4 with filledcurves lc rgb '{c}' notitle")
            plots.append(f"$d{i}_{key} using 1:2 with lines lw 2 lc rgb '{c}' title '{v} ({seeds} seeds)'")
        level = chance.get(CHANCE.get(key, ""), None)
        if isinstance(level, (int, float)):
            plots.append(f"{level!r} with lines dt 2 lw 2 lc rgb 'black' title 'content-only chance {level:.3f}'")
        gp.append("plot " + ", \\\n     ".join(plots))
    gp.append("unset multiplot")
    with open(os.path.join(args.OUT_DIR, "curves.gp"), "w") as f:
        f.write("\n".join(gp) + "\n")
    subprocess.run(["gnuplot", "curves.gp"], cwd=args.OUT_DIR, check=True)
    written = "curves.csv, curves.gp and curves.png"
    config = os.path.join(args.EXPERIMENT_DIR, "experiment.toml")
    if os.path.isfile(config):
        with open(config, "rb") as f:
            experiment = tomllib.load(f).get("experiment", {})
        main_variant, control = experiment.get("main", ""), experiment.get("control", "")
        if main_variant in data and control in data:
            with open(os.path.join(args.OUT_DIR, "matched.md"), "w") as f:
                f.write(matched_markdown(main_variant, control, traces[main_variant], traces[control]))
            written += " and matched.md"
    print(f"wrote {written} in {args.OUT_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
