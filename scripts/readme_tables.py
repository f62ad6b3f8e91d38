#!/usr/bin/env python3
"""The README's result tables from a re-run (scripts/rerun-results.sh OUT): the headline table
(OUT/p0sink/verdict.json: means and 95% intervals over seeds, truncated to each metric's range),
the ablation table (OUT/p0sink/ablations.csv, main variant, means over seeds) and the warm-start
table (OUT/warm_start/*/warm_start.json).

    python3 scripts/readme_tables.py OUT headline|ablations|warm-start
"""
import csv
import json
import os
import sys
from collections import OrderedDict, defaultdict
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_args import Parser, directory  # noqa: E402

HEADLINE_NAMES = {
    "main": "main (causal, NoPE, no BOS)",
    "prefix-bidirectional": "prefix-bidirectional (no asymmetry)",
    "bos": "+ BOS",
    "rope": "+ RoPE",
    "absolute": "+ absolute positions",
    "sigmoid": "sigmoid attention",
}


def interval(m):
    """mean [lo, hi], or the mean alone when every seed gave the same value."""
    if m["lo"] is None or m["lo"] == m["hi"]:
        return f"{m['mean']:.3f}"
    return f"{m['mean']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]".replace("-", "−")


def headline(out):
    v = json.loads((Path(out) / "p0sink" / "verdict.json").read_text())
    print("| variant | copy accuracy | first-trigger accuracy | layer-1 attention from triggers to key 0 | "
          "p0_norm_ratio after block 0 / 1 | p0_cos after block 1 | sink rate, layer 1 | emerged (id/norm/sink) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in v["variant_order"]:
        t = v["variants"][name]
        m = {x["metric"]: x for x in t["metrics"]}
        e = t["emerged"]
        print(f"| {HEADLINE_NAMES.get(name, name)} | {interval(m['task_accuracy'])} | "
              f"{interval(m['first_trigger_accuracy'])} | {interval(m['l1_active_attn_to_0'])} | "
              f"{m['p0_norm_ratio_l0']['mean']:.3f} / {m['p0_norm_ratio_l1']['mean']:.3f} | "
              f"{interval(m['p0_cos_l1'])} | {interval(m['sink_rate_l1'])} | "
              f"{e['identification']}/{e['high_norm']}/{e['sink']} |")


def ablations(out):
    rows = defaultdict(list)
    order = OrderedDict()
    with open(Path(out) / "p0sink" / "ablations.csv", newline="") as f:
        for r in csv.DictReader(f):
            if r["variant"] != "main":
                continue
            key = (r["component"], r["mode"])
            order.setdefault(key, None)
            rows[key].append(r)

    def mean(rs, col):
        return sum(float(r[col]) for r in rs) / len(rs)

    print("| ablated component (main, %d seeds) | copy accuracy | first-trigger accuracy | "
          "layer-1 attention from triggers to key 0 | p0_norm_ratio after block 0 / 1 | sink rate, layer 1 |"
          % len(rows[next(iter(order))]))
    print("|---|---:|---:|---:|---:|---:|")
    for (component, mode) in order:
        rs = rows[(component, mode)]
        label = "none (intact)" if component == "none" else f"{component} {mode}"
        print(f"| {label} | {mean(rs, 'accuracy'):.3f} | {mean(rs, 'first_accuracy'):.3f} | "
              f"{mean(rs, 'l1_active_attn_to_0'):.3f} | {mean(rs, 'p0_norm_ratio_l0'):.2f} / "
              f"{mean(rs, 'p0_norm_ratio_l1'):.2f} | {mean(rs, 'sink_rate_l1'):.2f} |")


def warm_start(out):
    cells = OrderedDict()
    for lr in ("3e-4", "3e-3"):
        for wd in ("0", "0.1"):
            cells[(lr, wd)] = [json.loads((Path(out) / "warm_start" / f"lr{lr}_wd{wd}_seed{s}" /
                                           "warm_start.json").read_text()) for s in (1, 2, 3)]
    print("| lr | weight decay | outcome (3 seeds) | max p0_norm_ratio: start → end | sink at the end |")
    print("|---|---|---|---|---|")
    for (lr, wd), runs in cells.items():
        outcomes = [r["outcome"] for r in runs]
        outcome = ", ".join(f"{o} ×{outcomes.count(o)}" for o in OrderedDict.fromkeys(outcomes))
        start = " / ".join(f"{r['initial']['max_p0_norm_ratio']:.1f}" for r in runs)
        end = " / ".join(f"{r['final']['max_p0_norm_ratio']:.2f}" for r in runs)
        sinks = [bool(r["final"]["sink"]) for r in runs]
        sink = "yes ×3" if all(sinks) else "no" if not any(sinks) else f"yes ×{sum(sinks)}, no ×{3 - sum(sinks)}"
        print(f"| {lr} | {wd} | {outcome} | {start} → {end} | {sink} |")


if __name__ == "__main__":
    tables = {"headline": headline, "ablations": ablations, "warm-start": warm_start}
    parser = Parser(__doc__)
    parser.add_argument("OUT", type=directory, help="the directory of scripts/rerun-results.sh")
    parser.add_argument("TABLE", choices=tables, help="which table")
    args = parser.parse_args()
    tables[args.TABLE](args.OUT)
