#!/usr/bin/env python3
"""The table of scripts/warm_start_optimizers.sh: per optimiser, learning rate and weight decay,
over its seeds, how the hand-wired circuit fares in 300 steps of firstrecall.

  python3 scripts/warm_start_table.py OUT

Columns (mean [95% bootstrap percentile interval] over seeds; scripts/interval.py):
  kept / dismantled   warm_start.json's outcome (kept = the high-norm and sink criteria still hold)
  p0_norm_ratio       the largest over blocks at the end (5.1-5.4 at the start)
  p0_cos              at that block (1.00 at the start)
  attention to key 0  block 1, mean over queries (0.85 at the start)
  accuracy            firstrecall copy accuracy at the trigger queries
  slope               d loss / d log(alpha) at alpha = 1, scaling position 0 after block 0 (scale-p0):
                      the loss gradient along the high norm; first row: the untrained warm starts
"""
import csv
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interval import cell  # noqa: E402
from script_args import Parser, directory  # noqa: E402


def final_trace(run):
    rows = list(csv.DictReader(open(os.path.join(run, "trace.csv"))))
    last = max(int(r["step"]) for r in rows)
    rows = [r for r in rows if int(r["step"]) == last]
    top = max(rows, key=lambda r: float(r["p0_norm_ratio"]))
    return {"ratio": float(top["p0_norm_ratio"]), "cos": float(top["p0_cos"]),
            "attn": float(rows[1]["attn_to_0"]), "accuracy": float(rows[0]["accuracy"] or "nan")}


def slope(run):
    for r in csv.DictReader(open(os.path.join(run, "scale_p0.csv"))):
        if r["layer"] == "0" and float(r["factor"]) == 1.0:
            return float(r["dloss_dlogfactor"]), float(r["loss"])
    raise SystemExit(f"{run}/scale_p0.csv: no row at layer 0, factor 1")


def main(argv):
    parser = Parser(__doc__)
    parser.add_argument("OUT", type=directory, help="the directory of scripts/warm_start_optimizers.sh")
    out = parser.parse_args(argv[1:]).OUT
    arms = {}
    for name in sorted(os.listdir(out)):
        m = re.fullmatch(r"(adamw|sgd)_lr([0-9.e-]+)_wd([0-9.]+)_seed(\d+)", name)
        run = os.path.join(out, name)
        if m and os.path.exists(os.path.join(run, "warm_start.json")):
            arms.setdefault((m[1], m[2], m[3]), []).append(run)
    starts = [os.path.join(out, n) for n in sorted(os.listdir(out)) if re.fullmatch(r"start_seed\d+", n)]
    print("| optimiser | lr | weight decay | seeds | kept / dismantled | p0_norm_ratio | p0_cos | attention to key 0 "
          "| accuracy | slope d loss / d log alpha |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    if starts:
        s = [slope(r)[0] for r in starts]
        print(f"| (untrained warm start) | | | {len(starts)} | | | | | | {cell(s, 7)} |")
    order = {"adamw": 0, "sgd": 1}
    for (opt, lr, wd), runs in sorted(arms.items(), key=lambda kv: (order[kv[0][0]], float(kv[0][1]), float(kv[0][2]))):
        outcomes = [json.load(open(os.path.join(r, "warm_start.json")))["outcome"] for r in runs]
        f = [final_trace(r) for r in runs]
        print(f"| {opt} | {lr} | {wd} | {len(runs)} | {outcomes.count('kept')} / {outcomes.count('dismantled')} | "
              f"{cell([x['ratio'] for x in f])} | {cell([x['cos'] for x in f])} | {cell([x['attn'] for x in f])} | "
              f"{cell([x['accuracy'] for x in f])} | {cell([slope(r)[0] for r in runs], 4)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
