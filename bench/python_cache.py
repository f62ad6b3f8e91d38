#!/usr/bin/env python3
"""The Python module's forward pass against the CLI's: `model.run_with_cache(tokens)` (every hook),
`model(tokens)` (logits only) and a cache of one hook, against a whole `p0sim eval` process on the
same weights and tokens (start-up, reading the weights, the forward pass, writing logits.npy,
hidden.npy and attn.npy). Medians of --reps calls each, one thread, interleaved.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_cache.py --p0sim build/p0sim [--reps 21]

Prints one Markdown table (bench/README.md keeps the last one).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import p0sim

# (name, options): the headline's model on its probe batch, and the science's natural-text size.
CONFIGS = [
    ("headline (L=2, C=64, H=4, T=16), 128 rows",
     dict(task="firstrecall", vocab=64, d_model=64, heads=4, layers=2, seq_len=16), 128),
    ("text size (L=4, C=256, H=8, T=256), 16 rows",
     dict(task="text", vocab=256, d_model=256, heads=8, layers=4, seq_len=256), 16),
]


def seconds(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p0sim", required=True, help="the p0sim binary of the same build as the module")
    ap.add_argument("--reps", type=int, default=21, help="calls per measurement (median)")
    args = ap.parse_args()
    if not os.access(args.p0sim, os.X_OK):
        print(f"--p0sim: '{args.p0sim}' is not an executable", file=sys.stderr)
        return 2
    print(f"p0sim {p0sim.__version__}, engine version {p0sim.engine_version}, medians of {args.reps} calls, one thread\n")
    print("| model, batch | `p0sim eval` process | `run_with_cache` (all hooks) | one hook | `model(tokens)` logits | eval / run_with_cache |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for index, (name, options, rows) in enumerate(CONFIGS):
            run = os.path.join(work, f"run{index}")
            flags = [f"--{k.replace('_', '-')}={v}" for k, v in options.items()]
            subprocess.run([args.p0sim, "train", *flags, "--steps", "1", "--batch", "4", "--probe-every", "0",
                            "--out", run], check=True, capture_output=True)
            model = p0sim.load(run)
            vocab = model.config["vocab"]
            tokens = np.random.default_rng(0).integers(0, vocab, (rows, options["seq_len"] + 1)).astype(np.int32)
            token_file = os.path.join(work, "tokens.npy")
            np.save(token_file, tokens)
            inputs = tokens[:, :-1]
            eval_cmd = [args.p0sim, "eval", "--weights", os.path.join(run, "weights"), "--tokens", token_file,
                        "--force", "--out", os.path.join(work, "eval")]
            calls = {
                "eval": lambda: subprocess.run(eval_cmd, check=True, capture_output=True),
                "cache": lambda: model.run_with_cache(inputs),
                "one": lambda: model.run_with_cache(inputs, names_filter="blocks.1.attn.hook_pattern"),
                "logits": lambda: model(inputs),
            }
            for fn in calls.values():  # warm-up
                fn()
            t = {k: [] for k in calls}
            for _ in range(args.reps):  # interleaved, so drift hits every column alike
                for k, fn in calls.items():
                    t[k].append(seconds(fn))
            m = {k: statistics.median(v) * 1e3 for k, v in t.items()}
            print(f"| {name} | {m['eval']:.1f} ms | {m['cache']:.1f} ms | {m['one']:.1f} ms | {m['logits']:.1f} ms "
                  f"| {m['eval'] / m['cache']:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
