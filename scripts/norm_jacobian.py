#!/usr/bin/env python3
"""The pre-norm Jacobian at position 0 against the other positions, measured in trained runs.

  PYTHONPATH=build/python python3 scripts/norm_jacobian.py [--csv FILE] GROUP=RUN_DIR[,RUN_DIR...] ...

(a RUN_DIR may be a glob pattern, quoted, standing for the directories it matches: 'start=out/w/start_seed*')

A pre-norm block l reads the residual stream h_t only through its first norm, y_t = norm1(h_t); an
update δ written into h_t moves what every later block reads by J_t δ, J_t = ∂y_t/∂h_t. The seed paper
credits a high-norm position 0 with a direction later blocks cannot turn: its J_0 small beside the
other positions'. Per run (its weights, on its own probe batch, through the p0sim module), per block
l and row, from the activations and the trained gains:
  jacobian_ratio  ||J_0||_F / median over t >= 1 of ||J_t||_F (J exact for the run's norm: RMSNorm
                  g r (I - x̂x̂ᵀ/C), LayerNorm g r (I - 11ᵀ/C - x̂x̂ᵀ/C), r = 1/sqrt(mean square + 1e-5);
                  no norm: diag(g), ratio 1)
  norm_ratio      |h_0| / median over t >= 1 of |h_t|, the residual state block l reads
  ratio_product   jacobian_ratio * norm_ratio: 1 when J shrinks exactly as 1/|h| (equal gains)
  turn_p0         the angle (degrees) between h_0 before block l and after it: how far block l turns
                  position 0's direction
  turn_rest       the same for each position t >= 1 (its own before and after), their median
Each is the median over the probe rows (a mean of ratios would be ruled by the few rows where
position 0 is small: trace.csv's p0_norm_ratio, a ratio of a mean to a median, is not this per-row
one); GROUP's row in the table is the mean over its runs [95% bootstrap percentile interval]
(scripts/interval.py). Block 0 reads the embeddings and is left out.
--csv FILE also writes one row per run and block.
"""
import csv
import glob
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interval import cell  # noqa: E402
from script_args import Parser  # noqa: E402

EPS = 1e-5  # sim/layers/norm.hpp's norm_eps
COLUMNS = ("jacobian_ratio", "norm_ratio", "ratio_product", "turn_p0", "turn_rest")


def norm_out(x, g, b, kind):
    """The engine's norm (sim/layers/norm.hpp) of states x (..., C) in float64."""
    if kind == "none":
        return x * g
    if kind == "rms":
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * g
    c = x - x.mean(axis=-1, keepdims=True)
    return c / np.sqrt(np.mean(c * c, axis=-1, keepdims=True) + EPS) * g + b


def jacobian_frobenius(x, g, kind):
    """||∂norm(x)/∂x||_F per state (..., C): row i of J is g_i r (e_i [- 1/C] - x̂_i x̂ / C)."""
    C = x.shape[-1]
    if kind == "none":
        return np.full(x.shape[:-1], np.sqrt(np.sum(g * g)))
    c = x if kind == "rms" else x - x.mean(axis=-1, keepdims=True)
    r = 1.0 / np.sqrt(np.mean(c * c, axis=-1, keepdims=True) + EPS)
    xh = c * r
    q = np.sum(xh * xh, axis=-1, keepdims=True)
    rows = 1.0 - (0.0 if kind == "rms" else 1.0 / C) - 2.0 * xh * xh / C + xh * xh * q / C**2
    return r[..., 0] * np.sqrt(np.sum(g * g * rows, axis=-1))


def angle(a, b):
    cos = np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def measure(run_dir):
    """[{block, jacobian_ratio, ...}] for blocks 1..L-1 of one run."""
    import p0sim
    model = p0sim.load(run_dir)
    kind = model.options["norm"]
    if model.options["mask"] == "prefix-bidirectional":
        raise ValueError(f"'{run_dir}': a prefix-bidirectional run has no single pass per row to read")
    rows, _ = model.probe_batch()
    _, cache = model.run_with_cache(rows[:, :-1])
    params = model.state_dict()
    out = []
    for block in range(1, int(model.options["layers"])):
        h = np.asarray(cache[f"blocks.{block}.hook_resid_pre"], dtype=np.float64)  # (B,P,C)
        after = np.asarray(cache[f"blocks.{block}.hook_resid_post"], dtype=np.float64)
        g = params[f"blocks.{block}.norm1.weight"].astype(np.float64)
        jac = jacobian_frobenius(h, g, kind)  # (B,P)
        size = np.linalg.norm(h, axis=-1)
        turn = angle(h, after)
        jacobian_ratio = jac[:, 0] / np.median(jac[:, 1:], axis=1)  # (B,): each row against its own positions
        norm_ratio = size[:, 0] / np.median(size[:, 1:], axis=1)
        r = {"block": block,
             "jacobian_ratio": np.median(jacobian_ratio),
             "norm_ratio": np.median(norm_ratio),
             "ratio_product": np.median(jacobian_ratio * norm_ratio),
             "turn_p0": np.median(turn[:, 0]),
             "turn_rest": np.median(np.median(turn[:, 1:], axis=1))}
        out.append({k: v if k == "block" else float(v) for k, v in r.items()})
    return out


def group(text):
    name, sep, dirs = text.partition("=")
    if not sep or not name or not dirs:
        raise ValueError(f"'{text}' is not GROUP=RUN_DIR[,RUN_DIR...]")
    # a pattern's matches that are directories (a run's log file beside it is not one)
    runs = [d for pattern in dirs.split(",")
            for d in ([m for m in sorted(glob.glob(pattern)) if os.path.isdir(m)] or [pattern])]
    for d in runs:
        if not os.path.isdir(os.path.join(d, "weights")):
            raise ValueError(f"'{d}' is not a finished run directory (no weights/)")
    return name, runs


def main(argv):
    parser = Parser(__doc__)
    parser.add_argument("groups", nargs="+", metavar="GROUP=RUN_DIR[,RUN_DIR...]")
    parser.add_argument("--csv", help="also write one row per run and block to this file")
    args = parser.parse_args(argv[1:])
    try:
        import p0sim  # noqa: F401
    except ImportError as e:
        print(f"norm_jacobian.py: the p0sim Python module is not importable ({e}); set PYTHONPATH=build/python "
              "after building the target p0sim_python", file=sys.stderr)
        return 2
    try:
        groups = [group(g) for g in args.groups]
        per_run = [(name, d, m) for name, runs in groups for d in runs for m in measure(d)]
    except (ValueError, RuntimeError) as e:
        print(f"norm_jacobian.py: {e}", file=sys.stderr)
        return 2
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["group", "run", "block", *COLUMNS])
            for name, d, m in per_run:
                w.writerow([name, d, m["block"], *(repr(m[c]) for c in COLUMNS)])
    print("| group | block | runs | " + " | ".join(COLUMNS) + " |")
    print("|---|---:|---:|" + "---|" * len(COLUMNS))
    for name, runs in groups:
        blocks = sorted({m["block"] for n, _, m in per_run if n == name})
        for block in blocks:
            ms = [m for n, _, m in per_run if n == name and m["block"] == block]
            print(f"| {name} | {block} | {len(ms)} | " +
                  " | ".join(cell([m[c] for m in ms], 1 if c.startswith("turn") else 3) for c in COLUMNS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
