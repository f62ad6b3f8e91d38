#!/usr/bin/env python3
"""Guo et al.'s three Bigram-Backcopy curves for p0sim runs, next to the numbers of their figures.

  python3 scripts/guo_figures.py OUT_DIR NAME=RUN_DIR[@STEP][,RUN_DIR[@STEP]...] [NAME=...]

Each NAME is an arm; its RUN_DIRs are its seeds (a directory of seed-<i>/ runs, such as an
experiment's runs/<variant>/, stands for all of them). RUN_DIR@STEP reads the runs up to their probe at
STEP, as if they had stopped there: a longer study's runs, continued from a shorter one's with a constant
learning rate, stand for the shorter one's. For each run (a `p0sim train` directory with
probes), over training, at head 0 of the last layer
(the layer where the dormant head forms, in 1 and 3 layers alike):
  attention to position 0 from the non-trigger queries (heads.csv attn_to_0_rest: the dormant head),
  |W_o v_0| (heads.csv value_out_norm_0: the value drain);
and the norm of position 0's residual after block 0 (trace.csv p0_norm: the residual peak, as Guo
et al. plot it) and its largest ratio over blocks to the median norm elsewhere (p0_norm_ratio).
Writes OUT_DIR/curves.gp (a gnuplot script holding every number it draws; `gnuplot curves.gp`
redraws curves.png: the mean over seeds, and the range over seeds as a band), OUT_DIR/table.md
(the last probe: mean [95% bootstrap percentile interval] over seeds; and each multi-layer run
layer by layer, since where the dormant head forms varies by seed) and OUT_DIR/effects.md and
effects.json: each of Guo et al.'s effects as a difference with its interval, an effect size and a
p-value (an exact permutation test between two arms, a one-sample t-test of the per-seed change
within one; scripts/interval.py). Guo et al.'s values, decoded
from their repository's saved figure data (docs/literature/guo2024_bigram_backcopy.md), are drawn as
points: 1-layer Adam (steps 0, 140, 300, 1000) and the 3-layer BOS residual after layer 0 with Adam
and with SGD (steps 0, 1000, 2000, 5000, 10 000, as far as the runs go).
"""
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interval import (bootstrap, bootstrap_difference, cell, cohens_d, finite_or_null, one_sample_test,  # noqa: E402
                      permutation_p)
from run_csv import datablock, number, read_csv  # noqa: E402
from script_args import Parser, arm  # noqa: E402

GUO_1L_ADAM = {"step": [0, 140, 300, 1000], "attn": [0.022, 0.054, 0.56, 0.78], "value": [5.2, 9.1, 5.5, 3.5],
               "res": [24.3, 30.5, 25.4, 27.0]}
GUO_3L_RES0 = {"Adam": ([0, 1000, 2000, 5000, 10000], [24, 34, 43, 71, 140.7]),
               "SGD": ([0, 1000, 2000, 5000, 10000], [24.4, 29, 26, 23, 20.4])}


def up_to_runs(steps, values, last_step):
    """Guo et al.'s points as far as the runs go: through the first one at or past the runs' last step,
    so their curve spans ours without stretching a short study's axis to their 10 000 steps."""
    n = next((i + 1 for i, s in enumerate(steps) if s >= last_step), len(steps))
    return steps[:n], values[:n]
def load(run_dir, until=None):
    """One run's probes (those up to step `until`, where given)."""
    def kept(rows):
        return [r for r in rows if until is None or int(r["step"]) <= until]
    trace = kept(read_csv(os.path.join(run_dir, "trace.csv")))
    last = str(max(int(r["layer"]) for r in trace))
    all_heads = [r for r in kept(read_csv(os.path.join(run_dir, "heads.csv"))) if r["head"] == "0"]
    heads = [r for r in all_heads if r["layer"] == last]
    # per layer, attention to position 0 from the non-trigger queries: with BOS and no positions the
    # dormant head can form in layer 0 (BOS is told apart there by its token alone)
    attn_layers = {l: [number(r["attn_to_0_rest"]) for r in all_heads if int(r["layer"]) == l]
                   for l in sorted({int(r["layer"]) for r in all_heads})}
    value_layers = {l: [number(r["value_out_norm_0"]) for r in all_heads if int(r["layer"]) == l] for l in attn_layers}
    with open(os.path.join(run_dir, "summary.json")) as f:
        summary = json.load(f)
    layers = sorted({int(r["layer"]) for r in trace})
    return {
        "step": [int(r["step"]) for r in heads],
        "attn": attn_layers[int(last)],
        "attn_layers": attn_layers,
        "attn_max": [max(v) for v in zip(*attn_layers.values())],
        "value": [number(r["value_out_norm_0"]) for r in heads],
        "value_layers": value_layers,
        "name": next((part for part in reversed(os.path.normpath(run_dir).split(os.sep))
                      if re.fullmatch(r"seed-\d+", part)), os.path.basename(os.path.normpath(run_dir))),
        "p0_norm": {l: [number(r["p0_norm"]) for r in trace if int(r["layer"]) == l] for l in layers},
        "rest_norm": {l: [number(r["rest_norm"]) for r in trace if int(r["layer"]) == l] for l in layers},
        "ratio": {l: [number(r["p0_norm_ratio"]) for r in trace if int(r["layer"]) == l] for l in layers},
        "max_ratio": [max(number(r["p0_norm_ratio"]) for r in trace if int(r["step"]) == s)
                      for s in sorted({int(r["step"]) for r in trace})],
        "accuracy": [number(r["accuracy"]) for r in trace if int(r["layer"]) == 0],
        "loss": [number(r["loss"]) for r in trace if int(r["layer"]) == 0],
        "config": summary["config"],
    }


def expand(dirs):
    """Run directories; a directory of seed-<i>/ runs (an experiment's runs/<variant>/) stands for its
    finished seeds (those with a summary.json: a study still running has unfinished ones), in seed order."""
    for d in dirs:
        seeds = [] if os.path.isfile(os.path.join(d, "summary.json")) or not os.path.isdir(d) else sorted(
            (e for e in os.listdir(d) if re.fullmatch(r"seed-\d+", e)), key=lambda e: int(e[5:]))
        finished = [e for e in seeds if os.path.isfile(os.path.join(d, e, "summary.json"))]
        if len(finished) < len(seeds):
            print(f"{os.path.basename(sys.argv[0])}: {d}: left out {len(seeds) - len(finished)} unfinished "
                  f"run(s) (no summary.json)", file=sys.stderr)
        yield from ([os.path.join(d, e) for e in finished] if seeds else [d])

# The quantities drawn and tabulated, each a function of one run giving its value at every probe.
SERIES = {
    "attn": lambda r: r["attn"],
    "attn_max": lambda r: r["attn_max"],
    "value": lambda r: r["value"],
    "h0_block0": lambda r: r["p0_norm"][0],
    "max_ratio": lambda r: r["max_ratio"],
}


def band(seeds, key):
    """(steps, mean, min, max) over the seeds of one arm, up to the shortest run's last probe."""
    n = min(len(r["step"]) for r in seeds)
    values = [SERIES[key](r)[:n] for r in seeds]
    cols = list(zip(*values))
    return seeds[0]["step"][:n], [sum(c) / len(c) for c in cols], [min(c) for c in cols], [max(c) for c in cols]


# Guo et al.'s effects, each as a difference over seeds: (effect, what they report, arm a, arm b or
# None, quantity, what reproduces it). With arm b None the difference is arm a's last probe minus its
# step-0 probe (paired, per seed); otherwise arm a's last probe against arm b's (unpaired).
def last(series):
    return series[-1]


def at_accuracy(series, accuracy, target):
    """The series at the first probe whose accuracy reaches target (its last value if none does)."""
    return next((v for v, acc in zip(series, accuracy) if acc >= target), series[-1])


def drain(series):
    """last / peak of a series that rose after step 0 (the drain's shape: up, then down); 1 when it
    never rose above its first value, so a series that only falls does not count as a drain."""
    peak = max(series[1:]) if len(series) > 1 else series[0]
    return series[-1] / peak if peak > series[0] else 1.0


# A two-arm effect needs enough seeds for the permutation test to reach p < 0.05 at all (2 against
# 2 cannot: its smallest p is 2/6); below that it is not decidable.
ALPHA = 0.05
# "Takes over BOS's role": position 0 without BOS within this much attention of BOS, or above it.
ROLE_MARGIN = 0.1

# the quantity and rule of every "position 0 takes BOS's role" effect
ATTN_TO_0_MAX = ("attention to position 0 from non-triggers, largest over layers", lambda r: r["attn_max"])
# Guo et al.'s residual-peak measure, shared by the Adam-against-SGD and the SGD-alone effects
H_BOS_AFTER_BLOCK_0 = ("|h_BOS| after block 0", lambda r: r["p0_norm"][0])
TAKES_ROLE = f"within {ROLE_MARGIN} of BOS or above: interval above -{ROLE_MARGIN}"

EFFECTS = [
    ("dormant head, 1 layer", "non-trigger attention to BOS 0.02 -> 0.78 (1000 steps)", "adam_L1", None,
     ("attention to BOS from non-triggers", lambda r: r["attn"]), "rises: interval above 0"),
    ("dormant head, 3 layers (last layer)", "forms in the last layer", "adam_L3", None,
     ("attention to BOS from non-triggers", lambda r: r["attn"]), "rises: interval above 0"),
    # added after the second seed's dormant head formed in layer 1 instead: where in the stack it forms
    # varies by seed, so the last-layer row above tests Guo et al.'s placement and this one the head
    ("dormant head, 3 layers (largest over layers)", "(a dormant head in any layer)", "adam_L3", None,
     ("attention to BOS from non-triggers, largest over layers", lambda r: r["attn_max"]), "rises: interval above 0"),
    ("value drain, 1 layer", "|W_o v_BOS| 5.2 -> peak 9.1 -> 3.5", "adam_L1", None,
     ("|W_o v_BOS| last / peak after a rise", None), "drains: interval below 1"),
    ("residual peak needs Adam (3 layers, after block 0)", "|h_BOS| Adam 24 -> 34 -> 43, SGD 24 -> 26",
     "adam_L3", "sgd_L3", H_BOS_AFTER_BLOCK_0, "Adam above SGD: interval above 0"),
    # Guo et al.'s SGD curve ends below its start (20.4 at 10 000 steps, 24.4 at 0): the peak is gone
    ("SGD removes the residual peak (3 layers, after block 0)",
     "|h_BOS| SGD 24.4 -> 29 -> 26 -> 23 -> 20.4 (steps 0, 1k, 2k, 5k, 10k)", "sgd_L3", None,
     H_BOS_AFTER_BLOCK_0, "back to its start or below: interval below 0"),
    ("residual peak relative to the rest (3 layers, largest block)", "BOS's residual far above the rest with Adam",
     "adam_L3", "sgd_L3", ("max over blocks |h_BOS| / median |h_t|", lambda r: r["max_ratio"]),
     "Adam above SGD: interval above 0"),
    ("ReLU attention removes the sink (1 layer)", "attention to BOS 0.000 by step 100", "relu_L1", "adam_L1",
     ("attention to BOS from non-triggers", lambda r: r["attn"]), "ReLU below softmax: interval below 0"),
    # each change at the other depth (scripts/guo_replication.sh's sgd_L1 and relu_L3 arms; docs/search/guo_depth)
    ("residual peak needs Adam (1 layer, after block 0)", "(shown at 3 layers)", "adam_L1", "sgd_L1",
     H_BOS_AFTER_BLOCK_0, "Adam above SGD: interval above 0"),
    # added after the first seed: with Adam every position's norm grows in one layer (BOS's less than the
    # rest's), so an Adam-above-SGD norm is no peak unless BOS also stands out from the rest
    ("residual peak relative to the rest (1 layer)", "(shown at 3 layers)", "adam_L1", "sgd_L1",
     ("|h_BOS| / median |h_t|", lambda r: r["max_ratio"]), "Adam above SGD: interval above 0"),
    ("ReLU attention removes the sink (3 layers, largest over layers)", "(shown at 1 layer, lr 3e-3)", "relu_L3",
     "adam_L3", ("attention to BOS from non-triggers, largest over layers", lambda r: r["attn_max"]),
     "ReLU below softmax: interval below 0"),
    ("ReLU attention removes the residual peak (3 layers, after block 0)",
     "|h_BOS| ReLU 23.4 -> 24.5, Adam 24 -> 141 (steps 0, 10k; lr 3e-4 both)", "relu_L3", "adam_L3",
     H_BOS_AFTER_BLOCK_0, "ReLU below softmax: interval below 0"),
    ("without BOS and positions, position 0 takes BOS's role (3 layers)", "(the seed paper's claim; not Guo et al.'s)",
     "nope_L3_nobos", "adam_L3", ("attention to position 0 from non-triggers", lambda r: r["attn"]),
     TAKES_ROLE),
    ("without BOS and positions, position 0 takes BOS's role (3 layers, largest over layers)",
     "(the seed paper's claim; not Guo et al.'s)", "nope_L3_nobos", "adam_L3",
     ATTN_TO_0_MAX, TAKES_ROLE),
    # configs/backcopy_nobos.toml: both arms without positions, so BOS is the only difference
    ("dormant head on BOS without positions (3 layers, NoPE)", "(the positive control of the no-BOS test)",
     "bos", None, ("attention to BOS from non-triggers, largest over layers", lambda r: r["attn_max"]),
     "rises: interval above 0"),
    ("without BOS, position 0 takes BOS's role (3 layers, NoPE both)", "(the seed paper's claim; not Guo et al.'s)",
     "main", "bos", ATTN_TO_0_MAX, TAKES_ROLE),
    # the no-BOS arm learns the task more slowly: BOS's value where its accuracy first reached the no-BOS
    # arm's final mean accuracy, so the two are compared at the same stage of learning
    ("without BOS, position 0 takes BOS's role, at matched accuracy (3 layers, NoPE both)",
     "(the seed paper's claim; not Guo et al.'s)", "main", "bos",
     ATTN_TO_0_MAX, "at matched accuracy, " + TAKES_ROLE),
    ("value drain at position 0 without BOS (3 layers, NoPE)", "BOS's drain: |W_o v_BOS| up, then down",
     "main", None, ("|W_o v_0| last / peak after a rise", None), "drains: interval below 1"),
    # configs/backcopy_nobos.toml's controls, no BOS in either (rules set before their runs finished):
    # positions tell position 0 apart by more than the mask; sigmoid attention needs no key to park on
    ("with positions (RoPE), position 0 takes BOS's role (3 layers)", "(the seed paper's claim; not Guo et al.'s)",
     "rope", "bos", ATTN_TO_0_MAX, TAKES_ROLE),
    ("positions change position 0's attention without BOS (3 layers)", "(a control: RoPE against NoPE)",
     "rope", "main", ATTN_TO_0_MAX, "differs: interval excludes 0"),
    ("with sigmoid attention, position 0 takes BOS's role (3 layers, NoPE)",
     "(Gu et al.: almost no sinks with sigmoid attention)", "sigmoid", "bos",
     ATTN_TO_0_MAX, TAKES_ROLE),
    ("sigmoid attention changes position 0's attention without BOS (3 layers, NoPE)",
     "(a control: sigmoid against softmax)", "sigmoid", "main",
     ATTN_TO_0_MAX, "differs: interval excludes 0"),
]


def effect_rows(arms):
    """Each effect with its difference, interval, d, p and "yes", "no" or "not decidable"."""
    rows = []
    for name, theirs, a, b, (quantity, series), rule in EFFECTS:
        if a not in arms or (b is not None and b not in arms):
            continue
        seeds = [len(arms[a])] + ([len(arms[b])] if b else [])
        d = p = float("nan")
        if series is None:  # the drain, per seed, against 1
            values = [drain(r["value"]) for r in arms[a]]
            mean, lo, hi = bootstrap(values)
            d, p = one_sample_test(values, 1.0)
            yes, no = hi < 1 and p < ALPHA, lo >= 1
            label = f"{a}: last / peak"
        elif b is None:  # a rise over training, per seed
            values = [last(series(r)) - series(r)[0] for r in arms[a]]
            mean, lo, hi = bootstrap(values)
            d, p = one_sample_test(values)
            if "below 0" in rule:  # "no" says it stays above its start: a difference, so it needs p too
                yes, no = hi < 0 and p < ALPHA, lo > 0 and p < ALPHA
            else:
                yes, no = lo > 0 and p < ALPHA, hi <= 0
            label = f"{a}: last - step 0"
        else:
            xa, xb = [last(series(r)) for r in arms[a]], [last(series(r)) for r in arms[b]]
            if rule.startswith("at matched accuracy"):
                xb = [at_accuracy(series(r), r["accuracy"], sum(x["accuracy"][-1] for x in arms[a]) / len(arms[a]))
                      for r in arms[b]]
            mean, lo, hi = bootstrap_difference(xa, xb)
            d, p = cohens_d(xa, xb), permutation_p(xa, xb)
            if "within" in rule:  # a non-inferiority margin, not a test of no difference
                yes, no = lo > -ROLE_MARGIN, hi < -ROLE_MARGIN and p < ALPHA
            elif "below 0" in rule:
                yes, no = hi < 0 and p < ALPHA, lo >= 0
            elif "excludes 0" in rule:  # two-sided: "no" would need an equivalence margin, so never said
                yes, no = (lo > 0 or hi < 0) and p < ALPHA, False
            else:
                yes, no = lo > 0 and p < ALPHA, hi <= 0
            label = f"{a} - {b}" + (" (at matched accuracy)" if rule.startswith("at matched accuracy") else "")
        if min(seeds) < 2:
            d = p = float("nan")
            verdict = "not decidable (one seed)"
        elif b is not None and 2 / math.comb(sum(seeds), seeds[0]) >= ALPHA:
            verdict = "not decidable (too few seeds for p < 0.05)"
        else:
            verdict = "yes" if yes else "no" if no else "not decidable at these seeds"
        rows.append({"effect": name, "theirs": theirs, "quantity": quantity, "comparison": label, "seeds": seeds,
                     "mean": mean, "lo": lo, "hi": hi, "cohens_d": d, "p": p,
                     "test": "exact permutation" if b is not None else "one-sample t", "rule": rule,
                     "reproduced": verdict})
    return rows


def effects_markdown(effects):
    """effects.md's text: each row of effect_rows (or of an effects.json) with its rule and verdict."""
    lines = ["Each effect as a difference over seeds at the last probe: mean [95% bootstrap percentile interval].",
             "Two arms: Cohen's d and the exact two-sided permutation p. One arm (a change within each seed, or a",
             "ratio against 1): d = mean change / its standard deviation and the two-sided one-sample t-test's p",
             "(scripts/interval.py). An effect counts as reproduced when its interval is on the side its rule",
             "states and p < 0.05; \"no\" needs the interval on the other side (and p < 0.05 where it claims a",
             "difference); anything between is not decidable.", "",
             "| effect | Guo et al. | quantity | comparison | seeds | difference | d | p | rule | reproduced |",
             "|---|---|---|---|---|---|---:|---:|---|---|"]

    def md(text):
        return text.replace("|", "\\|")

    for e in effects:
        lines.append(f"| {md(e['effect'])} | {md(e['theirs'])} | {md(e['quantity'])} | {e['comparison']} | "
                     f"{'/'.join(map(str, e['seeds']))} | {e['mean']:.3f} [{fmt(e['lo'])}, {fmt(e['hi'])}] | "
                     f"{fmt(e['cohens_d'], 2)} | {fmt(e['p'], 2)} | "
                     f"{e['rule']} | {e['reproduced']} |")
    return "\n".join(lines) + "\n"


def fmt(x, digits=3):
    """A figure, or "-" for one not computed (NaN here, null in effects.json)."""
    return "-" if x is None or x != x else f"{x:.{digits}g}"


def main(argv):
    parser = Parser(__doc__)
    parser.add_argument("OUT_DIR", help="where curves.gp/png, table.md and effects.md/json go (created)")
    parser.add_argument("ARM", nargs="+", type=arm, help="NAME=RUN_DIR[@STEP][,RUN_DIR[@STEP]...]: an arm and its seeds' runs (up to STEP)")
    args = parser.parse_args(argv[1:])
    out = args.OUT_DIR
    arms = {}
    for name, dirs in args.ARM:
        arms[name] = []
        for text in dirs:
            base, at, until = text.rpartition("@") if "@" in text else (text, "", "")
            if at and not until.isdigit():
                print(f"guo_figures.py: {text}: '@{until}' is not @STEP, a step number", file=sys.stderr)
                return 2
            for run_dir in expand([base]):
                for f in ("heads.csv", "trace.csv", "summary.json"):
                    if not os.path.isfile(os.path.join(run_dir, f)):
                        print(f"guo_figures.py: {run_dir} has no {f} (a p0sim train directory with probes is needed)",
                              file=sys.stderr)
                        return 2
                run = load(run_dir, int(until) if at else None)
                if at and run["step"][-1] != int(until):
                    print(f"guo_figures.py: {run_dir} has no probe at step {until} (its probes reach "
                          f"{run['step'][-1]})", file=sys.stderr)
                    return 2
                arms[name].append(run)
        if not arms[name]:
            print(f"guo_figures.py: arm {name} has no run directory", file=sys.stderr)
            return 2
    os.makedirs(out, exist_ok=True)

    gp = ["# Guo et al.'s Bigram-Backcopy curves: p0sim runs (lines: mean over seeds; bands: range over seeds)",
          "# and their figures' numbers (points). Written by scripts/guo_figures.py; `gnuplot curves.gp` redraws",
          "# curves.png.",
          "set terminal pngcairo size 2250,500 font ',10' noenhanced", "set output 'curves.png'",
          # keys under the panels: inside, they sat on the curves near 1; a fixed margin keeps the panels aligned
          "set multiplot layout 1,5", "set key below font ',8' maxrows 3 width 2", "set bmargin 7", "set grid",
          "set xlabel 'step'",
          "set style fill transparent solid 0.2 noborder"]
    gp.append(datablock("guo1", [GUO_1L_ADAM["step"], GUO_1L_ADAM["attn"], GUO_1L_ADAM["value"], GUO_1L_ADAM["res"]]))
    last_step = max(r["step"][-1] for seeds in arms.values() for r in seeds)
    for label, (steps, values) in GUO_3L_RES0.items():
        gp.append(datablock(f"guo3{label}", list(up_to_runs(steps, values, last_step))))
    keys = list(SERIES)
    for i, seeds in enumerate(arms.values()):
        cols = []
        for key in keys:
            steps, mean, lo, hi = band(seeds, key)
            cols += [mean, lo, hi]
        gp.append(datablock(f"run{i}", [steps] + cols))
    panels = [("attention to position 0 from non-trigger queries (last layer)", "attn", False),
              ("the same, largest over layers", "attn_max", False),
              ("|W_o v_0| (last layer): the value drain", "value", True),
              ("|h_0| after block 0: the residual peak", "h0_block0", True),
              ("max over blocks of |h_0| / median |h_t|", "max_ratio", False)]
    guo_col = {"attn": 2, "value": 3, "h0_block0": 4}
    for title, key, log in panels:
        c = 2 + 3 * keys.index(key)
        plots = []
        for i, (name, seeds) in enumerate(arms.items()):
            plots.append(f"$run{i} using 1:{c + 1}:{c + 2} with filledcurves lc {i + 1} notitle")
            seeds_label = f"{len(seeds)} seed" + ("s" if len(seeds) > 1 else "")
            plots.append(f"$run{i} using 1:{c} with lines lw 2 lc {i + 1} title '{name} ({seeds_label})'")
        if key in guo_col:
            plots.append(f"$guo1 using 1:{guo_col[key]} with points pt 7 ps 1.2 lc rgb 'black' title 'Guo 1L Adam'")
        if key == "h0_block0":
            plots += [f"$guo3{label} using 1:2 with points pt {5 + k} ps 1.2 lc rgb 'black' title 'Guo 3L {label}'"
                      for k, label in enumerate(GUO_3L_RES0)]
        gp.append(f"set title '{title}'")
        gp.append("set logscale y" if log else "unset logscale y")
        gp.append("plot " + ", \\\n     ".join(plots))
    gp.append("unset multiplot")
    gp_path = os.path.join(out, "curves.gp")
    with open(gp_path, "w") as f:
        f.write("\n".join(gp) + "\n")
    subprocess.run(["gnuplot", "curves.gp"], cwd=out, check=True)

    table = ["Last probe, mean [95% bootstrap percentile interval] over seeds (the mean alone for one seed).", "",
             "| run | seeds | layers | attn | optimizer | lr | steps | probe loss (nats) | backcopy accuracy | "
             "attn to 0 from non-triggers (last layer) | the same per layer | \\|W_o v_0\\| | \\|h_0\\| per block | "
             "median \\|h_t\\| per block |",
             "|---|---:|---:|---|---|---:|---:|---|---|---|---|---|---|---|"]
    for name, seeds in arms.items():
        c = seeds[0]["config"]
        blocks = sorted(seeds[0]["p0_norm"])
        p0 = " / ".join(f"{sum(r['p0_norm'][l][-1] for r in seeds) / len(seeds):.1f}" for l in blocks)
        attn = " / ".join(f"{sum(r['attn_layers'][l][-1] for r in seeds) / len(seeds):.3f}"
                          for l in sorted(seeds[0]["attn_layers"]))
        rest = " / ".join(f"{sum(r['rest_norm'][l][-1] for r in seeds) / len(seeds):.1f}" for l in blocks)
        table.append(f"| {name} | {len(seeds)} | {c['layers']} | {c['attn']} | {c['optimizer']} | {c['lr']:g} | "
                     f"{seeds[0]['step'][-1]} | {cell([r['loss'][-1] for r in seeds], 3)} | "
                     f"{cell([r['accuracy'][-1] for r in seeds], 3)} | {cell([r['attn'][-1] for r in seeds], 3)} | {attn} | "
                     f"{cell([r['value'][-1] for r in seeds])} | {p0} | {rest} |")
    # Where in the stack the dormant head forms varies by seed: each multi-layer run's last probe per layer.
    per_seed = [(name, r) for name, seeds in arms.items() for r in seeds if len(r["attn_layers"]) > 1]
    if per_seed:
        table += ["", "Per run with more than one layer, last probe, by layer (block): attention to position 0 from",
                  "non-trigger queries, |W_o v_0| and |h_0| / median |h_t|, and the layer whose attention to position 0",
                  "is the largest (the dormant head's, where one formed).", "",
                  "| run | seed | layer most on 0 | attn to 0 per layer | \\|W_o v_0\\| per layer | \\|h_0\\| / median per block |",
                  "|---|---|---:|---|---|---|"]
        for name, r in per_seed:
            layers = sorted(r["attn_layers"])
            most = max(layers, key=lambda l: r["attn_layers"][l][-1])
            table.append(f"| {name} | {r['name']} | {most} | "
                         + " / ".join(f"{r['attn_layers'][l][-1]:.3f}" for l in layers) + " | "
                         + " / ".join(f"{r['value_layers'][l][-1]:.1f}" for l in layers) + " | "
                         + " / ".join(f"{r['ratio'][l][-1]:.2f}" for l in sorted(r["ratio"])) + " |")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(table) + "\n")

    effects = effect_rows(arms)
    with open(os.path.join(out, "effects.md"), "w") as f:
        f.write(effects_markdown(effects))
    with open(os.path.join(out, "effects.json"), "w") as f:
        json.dump(finite_or_null({"effects": effects, "arms": {n: len(s) for n, s in arms.items()}}), f, indent=1,
                  allow_nan=False)
        f.write("\n")
    print(f"wrote {gp_path}, curves.png, table.md, effects.md and effects.json in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
