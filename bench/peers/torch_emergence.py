#!/usr/bin/env python3
"""PyTorch peer of p0sim's BM_emergence (bench/bench_emergence.cpp): train the firstrecall task
from scratch with the same model (torch_train.TinyTransformer: DESIGN.md section 3), the same
data law, optimiser, probe cadence and identification criterion, and report steps and seconds to
identification emergence, one JSON object per (d, T) point.

  data     firstrecall (sim/data.cpp): V=64, k=4 triggers (tokens V-k..V-1), q=0.1, uniform
           fillers 0..V-k-1. x_0 = a trigger w.p. q else a filler; for t >= 1: right after an
           inserted trigger (t-1 >= 1) x_t = x_0; else a trigger w.p. q (inserted: it fires) else
           a filler. Active queries: the positions t < T holding an inserted trigger. Not p0sim's
           random stream (Philox), the same distribution; training batches and the fixed probe
           batch come from independent streams.
  model    V=64, H=4, L=2, F=4C, causal, NoPE, no BOS, RMSNorm, tanh-GELU, softmax.
  optim    AdamW(lr 3e-3, betas (0.9, 0.95), eps 1e-8, wd 0.1 on matrices), constant lr, global
           gradient-norm clip 1.0, batch 64.
  probe    every 25 steps (and at step 0) on 128 fixed rows: identification = argmax accuracy at
           the active queries >= 0.9 and, at some head of some layer, the attention to key 0
           averaged over the active queries >= 0.5. Emergence step = the first probe of a run
           of 3 consecutive holding probes; the run stops there. Seconds: wall time from the start
           of training (after building the model) to the end of the probe at the emergence step; also
           in process CPU time (steadier on a shared machine).
Run it through emergence_peer.sh (OpenBLAS preloaded, one thread).
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_train import TinyTransformer, blas_in_use, gemm_gflops  # noqa: E402

V, K, Q, H, L, B = 64, 4, 0.1, 4, 2, 64
PROBE_EVERY, PROBE_BATCH, CONFIRM = 25, 128, 3
EMERGE_ACC, EMERGE_ATTN = 0.9, 0.5


def firstrecall(rng, n, T):
    """(n, T+1) int64 rows and (n, T) bool active mask, sim/data.cpp's row law."""
    nf = V - K
    x = np.empty((n, T + 1), dtype=np.int64)
    active = np.zeros((n, T), dtype=bool)
    coins = rng.random((n, T + 1)) < Q
    trig = rng.integers(nf, V, size=(n, T + 1))
    fill = rng.integers(0, nf, size=(n, T + 1))
    x[:, 0] = np.where(coins[:, 0], trig[:, 0], fill[:, 0])
    fired = np.zeros(n, dtype=bool)
    for t in range(1, T + 1):
        copy = fired
        fired = ~copy & coins[:, t]
        x[:, t] = np.where(copy, x[:, 0], np.where(fired, trig[:, t], fill[:, t]))
        if t < T:
            active[:, t] = fired
    return torch.from_numpy(x), torch.from_numpy(active)


@torch.no_grad()
def probe(model, rows, active):
    """Identification on the probe batch: (holds, accuracy, best head attention to key 0)."""
    cfg = model.cfg
    n, P, C = rows.shape[0], rows.shape[1] - 1, cfg["d_model"]
    D = C // H
    x = F.embedding(rows[:, :-1], model.p("tok_emb")).reshape(n * P, C)
    best = -1.0
    act = active.reshape(n, 1, P)  # (n,1,P) queries
    count = float(active.sum())
    for lw in model.layers:
        qkv = model.norm(x, lw["n1"]) @ lw["wqkv"].t()
        q, k, v = qkv.view(n, P, 3, H, D).permute(2, 0, 3, 1, 4).unbind(0)
        q, k, v = (t.reshape(n * H, P, D) for t in (q, k, v))
        s = torch.baddbmm(model.bias[:P, :P], q, k.transpose(1, 2), alpha=1.0 / math.sqrt(D))
        A = torch.softmax(s, -1)
        if count > 0:
            to0 = (A[:, :, 0].view(n, H, P) * act).sum((0, 2)) / count  # (H,)
            best = max(best, float(to0.max()))
        y = torch.bmm(A, v).view(n, H, P, D).transpose(1, 2).reshape(n * P, C)
        x = torch.addmm(x, y, lw["wo"].t())
        h = F.gelu(model.norm(x, lw["n2"]) @ lw["w1"].t(), approximate="tanh")
        x = torch.addmm(x, h, lw["w2"].t())
    logits = (model.norm(x, "norm_f") @ model.p("lm_head").t()).view(n, P, -1)
    hit = (logits.argmax(-1) == rows[:, 1:]) & active
    acc = float(hit.sum()) / count if count > 0 else float("nan")
    return count > 0 and acc >= EMERGE_ACC and best >= EMERGE_ATTN, acc, best


def run(d, T, seed, cap, lr=3e-3):
    torch.manual_seed(seed)
    cfg = dict(vocab=V, d_model=d, heads=H, layers=L, d_ff=4 * d, seq_len=T, bos=False, pos="none",
               norm="rms", act="gelu", attn="softmax", mask="causal")
    model = TinyTransformer(cfg)
    opt = model.adamw(lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    params = list(model.parameters())
    train_rng = np.random.default_rng([seed, 0])
    probe_rows, probe_active = firstrecall(np.random.default_rng([seed, 1]), PROBE_BATCH, T)
    holds, times, cpus, steps = [], [], [], []
    t0, c0 = time.perf_counter(), time.process_time()

    def do_probe(s):
        ok, acc, best = probe(model, probe_rows, probe_active)
        holds.append(ok)
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        steps.append(s)
        return len(holds) >= CONFIRM and all(holds[-CONFIRM:])

    done = do_probe(0)
    s = 0
    while not done and s < cap:
        rows, _ = firstrecall(train_rng, B, T)
        _, loss = model(rows)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        s += 1
        if s % PROBE_EVERY == 0 or s == cap:
            done = do_probe(s)
    if done:
        first = len(holds) - 1
        while first > 0 and holds[first - 1]:
            first -= 1
        return True, steps[first], times[first], cpus[first]
    return False, cap, times[-1], cpus[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--point", action="append", default=None, help="d,T (repeatable); default 64,32 and 32,16")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cap", type=int, default=1000)
    args = ap.parse_args()
    torch.set_num_threads(1)
    points = [tuple(int(v) for v in p.split(",")) for p in args.point] if args.point else [(64, 32), (32, 16)]
    print(json.dumps({"blas": blas_in_use(), "gemm512_gflops": round(gemm_gflops(), 2),
                      "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "(autodetect)"),
                      "torch": torch.__version__, "threads": torch.get_num_threads()}), flush=True)
    for d, T in points:
        runs = [run(d, T, seed, args.cap) for seed in range(1, args.seeds + 1)]
        st = sorted(r[1] for r in runs)
        sec = sorted(r[2] for r in runs)
        cpu = sorted(r[3] for r in runs)
        med = lambda v: v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])
        print(json.dumps({"d": d, "T": T, "emerged": sum(r[0] for r in runs) / len(runs),
                          "steps": [r[1] for r in runs], "seconds": [r[2] for r in runs],
                          "steps_to_emergence": med(st), "seconds_to_emergence": med(sec),
                          "cpu_seconds": [r[3] for r in runs], "cpu_seconds_to_emergence": med(cpu)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
