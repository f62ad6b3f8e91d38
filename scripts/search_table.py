#!/usr/bin/env python3
"""Markdown table of a search stage (README "Where the P0 sink emerges") from its results.csv.

Per cell (variant), means over its seeds of the final probe: task accuracy (copy or lookup), the
largest p0_norm_ratio over layers (mean over seeds, and the largest seed in brackets), p0_cos at
that layer, the largest sink rate and attention to key 0 over layers >= 1, and in how many seeds
each claim emerged (identification / high-norm / sink).

    python3 scripts/search_table.py out/search/stage_a/results.csv
"""
import csv
import os
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_args import Parser, existing_file  # noqa: E402


def num(s):
    return float(s) if s not in ("", None) else None


def main(path):
    cells = OrderedDict()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            cells.setdefault(row["variant"], []).append(row)
    print("| cell | task accuracy | max_l p0_norm_ratio: mean (max) | p0_cos at that layer | "
          "max_{l≥1} sink rate | max_{l≥1} attn to key 0 | emerged id/norm/sink (of %d) |"
          % max(len(v) for v in cells.values()))
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, rows in cells.items():
        layers = sorted({int(k.rsplit("_l", 1)[1]) for k in rows[0] if k.startswith("p0_norm_ratio_l")
                         and rows[0][k] != ""})
        # results.csv files written before the rename call the task's accuracy copy_accuracy
        key = "task_accuracy" if "task_accuracy" in rows[0] else "copy_accuracy"
        acc = [num(r[key]) for r in rows if num(r[key]) is not None]
        ratios, coses, sinks, attns = [], [], [], []
        for r in rows:
            best = max(layers, key=lambda l: num(r[f"p0_norm_ratio_l{l}"]))
            ratios.append(num(r[f"p0_norm_ratio_l{best}"]))
            coses.append(num(r[f"p0_cos_l{best}"]))
            sinks.append(max(num(r[f"sink_rate_l{l}"]) for l in layers if l >= 1))
            attns.append(max(num(r[f"attn_to_0_l{l}"]) for l in layers if l >= 1))
        mean = lambda xs: sum(xs) / len(xs)
        emerged = "/".join(str(sum(r[f"emerged_{c}"] != "" for r in rows))
                           for c in ("identification", "high_norm", "sink"))
        print(f"| {name} | {mean(acc):.2f} |" if acc else f"| {name} | – |", end="")
        print(f" {mean(ratios):.2f} ({max(ratios):.2f}) | {mean(coses):.2f} | {mean(sinks):.2f} |"
              f" {mean(attns):.2f} | {emerged} |")


if __name__ == "__main__":
    parser = Parser(__doc__)
    parser.add_argument("RESULTS_CSV", type=existing_file, help="a search stage's results.csv")
    main(parser.parse_args().RESULTS_CSV)
