#!/usr/bin/env python3
"""Loss along position 0's residual scale in every trained run of an experiment: `p0sim scale-p0`
on each finished RUNS/<variant>/seed-<i>/ (position 0 scaled by alpha after block LAYER, the run's probe
rows), then per variant the mean [95% bootstrap percentile interval] over seeds of the slope
d loss / d log alpha at alpha = 1, of loss(alpha) - loss(1) for alpha = 0.5, 2, 4 (nats), and of the
largest change over those alphas in any later layer's attention to key 0 (a pre-norm block reads
its input through a norm, so a model that cannot use the scale shows none).

  python3 scripts/scale_p0_table.py [--layer L] P0SIM EXPERIMENT_DIR [VARIANT ...]
      (default layer 0; default: every variant)
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guo_figures import expand  # noqa: E402
from interval import cell  # noqa: E402
from script_args import Parser  # noqa: E402

FACTORS = [0.5, 1.0, 2.0, 4.0]


def block(text):
    """--layer: a block index (a non-negative integer)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not a block index (0, 1, ...)")
    return int(text)


def experiment_dir(path):
    """EXPERIMENT_DIR: a directory holding runs/."""
    if not os.path.isdir(os.path.join(path, "runs")):
        raise argparse.ArgumentTypeError(f"'{path}' has no runs/ (a `p0sim experiment` directory is needed)")
    return path


def later_attention_change(rows):
    """max over later layers and alphas of |attn_to_0_l(alpha) - attn_to_0_l(1)|; NaN without a later layer."""
    keys = [k for k, x in rows[1.0].items() if k.startswith("attn_to_0_l") and x != ""]
    return max((abs(float(r[k]) - float(rows[1.0][k])) for r in rows.values() for k in keys), default=float("nan"))


def main(argv):
    parser = Parser(__doc__)
    parser.add_argument("--layer", type=block, default=0, help="the block after which position 0 is scaled (default 0)")
    parser.add_argument("P0SIM", help="the p0sim binary")
    parser.add_argument("EXPERIMENT_DIR", type=experiment_dir, help="a `p0sim experiment` directory (with runs/)")
    parser.add_argument("VARIANT", nargs="*", default=[], help="the variants to scale (default: every variant)")
    args = parser.parse_args(argv[1:])
    p0sim, layer, runs = args.P0SIM, args.layer, os.path.join(args.EXPERIMENT_DIR, "runs")
    variants = args.VARIANT or sorted(os.listdir(runs))
    # printed only when every run has been scaled: a failure leaves no partial table
    lines = [f"Position 0 scaled by alpha after block {layer}.", ""]
    lines.append("| variant | seeds | slope at alpha = 1 | loss(0.5) - loss(1) | loss(2) - loss(1) | loss(4) - loss(1) "
                 "| largest change in later attention to key 0 |")
    lines.append("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for v in variants:
            slope, diffs, attn = [], {a: [] for a in FACTORS if a != 1.0}, []
            for run in expand([os.path.join(runs, v)]):  # its finished seeds
                seed = os.path.basename(run)
                out = os.path.join(tmp, f"{v}_{seed}.csv")
                proc = subprocess.run([p0sim, "scale-p0", run, "--layers", str(layer),
                                       "--factors", ",".join(str(a) for a in FACTORS), "--out", out],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    print(proc.stderr.strip() or f"p0sim scale-p0 failed on {v}/{seed}", file=sys.stderr)
                    return 2
                rows = {float(r["factor"]): r for r in csv.DictReader(open(out))}
                base = float(rows[1.0]["loss"])
                slope.append(float(rows[1.0]["dloss_dlogfactor"]))
                for a in diffs:
                    diffs[a].append(float(rows[a]["loss"]) - base)
                attn.append(later_attention_change(rows))
            lines.append(f"| {v} | {len(slope)} | {cell(slope, 4)} | " + " | ".join(cell(diffs[a], 4) for a in diffs)
                         + f" | {cell(attn, 4)} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
