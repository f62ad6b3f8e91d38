#!/usr/bin/env python3
"""Loss along position 0's residual scale in every trained run of an experiment: `p0sim scale-p0`
on each RUNS/<variant>/seed-<i>/ (position 0 scaled by alpha after block 0, the run's probe rows),
then per variant the mean [95% bootstrap percentile interval] over seeds of the slope
d loss / d log alpha at alpha = 1 and of loss(alpha) - loss(1) for alpha = 0.5, 2, 4 (nats).

  python3 scripts/scale_p0_table.py P0SIM EXPERIMENT_DIR [VARIANT ...]   (default: every variant)
"""
import csv
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interval import cell  # noqa: E402

FACTORS = [0.5, 1.0, 2.0, 4.0]


def main(argv):
    if len(argv) < 3 or not os.path.isdir(os.path.join(argv[2], "runs")):
        print("usage: scale_p0_table.py P0SIM EXPERIMENT_DIR [VARIANT ...] (EXPERIMENT_DIR/runs/ must exist)",
              file=sys.stderr)
        return 2
    p0sim, runs = argv[1], os.path.join(argv[2], "runs")
    variants = argv[3:] or sorted(os.listdir(runs))
    print("| variant | seeds | slope at alpha = 1 | loss(0.5) - loss(1) | loss(2) - loss(1) | loss(4) - loss(1) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for v in variants:
            slope, diffs = [], {a: [] for a in FACTORS if a != 1.0}
            for seed in sorted(os.listdir(os.path.join(runs, v))):
                out = os.path.join(tmp, f"{v}_{seed}.csv")
                subprocess.run([p0sim, "scale-p0", os.path.join(runs, v, seed), "--layers", "0", "--factors",
                                ",".join(str(a) for a in FACTORS), "--out", out], check=True, capture_output=True)
                rows = {float(r["factor"]): r for r in csv.DictReader(open(out))}
                base = float(rows[1.0]["loss"])
                slope.append(float(rows[1.0]["dloss_dlogfactor"]))
                for a in diffs:
                    diffs[a].append(float(rows[a]["loss"]) - base)
            print(f"| {v} | {len(slope)} | {cell(slope, 4)} | " + " | ".join(cell(diffs[a], 4) for a in diffs) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
