#!/usr/bin/env python3
"""PyTorch peer of p0sim's model (DESIGN.md section 3), for two jobs:

  bench:  steps/s of the whole training step (forward, backward, AdamW) on one thread, at the
          configurations of p0sim's BM_train_step, printed as one JSON object per line.
  run:    one whole training process of N steps at one configuration (import, model, data, the
          steps), the peer of a `p0sim train` process timed from outside (bench/figures.sh).
  check:  load a p0sim run's weights/*.npy and weights/config.json, evaluate token rows, and
          compare the loss and logits with `p0sim eval`'s loss.json and logits.npy.

Run it through train_peer.sh, which points the BLAS at OpenBLAS (Debian's torch otherwise may
use the reference BLAS, 7-10x slower) and prints which BLAS library is mapped.
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


def blas_in_use():
    """The BLAS shared objects mapped into this process (proof of which one runs)."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "blas" in path or "lapack" in path:
                libs.add(path)
    return sorted(libs)


def gemm_gflops(n=512, reps=20):
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        a @ b
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n**3 * reps / (time.perf_counter() - t0) / 1e9


class TinyTransformer(torch.nn.Module):
    """DESIGN.md section 3: pre-norm blocks, linear weights stored (out, in), no biases except
    LayerNorm's. `names` are p0sim's weight file names and `p(name)` the tensor behind each.

    Written the way a careful PyTorch user tunes a tiny model for one CPU thread, where the step
    is bound by per-operator overhead rather than FLOPs (torch.profiler at the small
    configuration: the GEMMs are ~35% of the time, the rest is dispatch, views and autograd):
    wq, wk, wv are rows of one fused (3C,C) parameter (one GEMM and one backward GEMM pair
    instead of three); the residual adds ride on addmm; the causal mask is an additive -inf
    matrix built once and fed to baddbmm together with the 1/sqrt(D) scale; activations stay
    2-D (B*P,C) so no matmul goes through the batched-matmul path. Debian's built-in tanh-GELU
    was faster than a hand-written tanh formula and than TorchScript (with or without the NNC
    CPU fuser) in a micro-benchmark, so it stays; torch.jit.trace of the whole model did not speed
    the step up either, and bmm beat einsum and broadcast-multiply-sum for the per-head products.
    Before these changes the step ran at 0.73x (small) and 0.83x (middle) of this one's rate,
    A/B on the same loaded machine. The maths is unchanged: `check` compares it
    with `p0sim eval`."""

    def __init__(self, cfg, dtype=torch.float32):
        super().__init__()
        self.cfg = cfg
        V, C, F_, L = cfg["vocab"], cfg["d_model"], cfg["d_ff"], cfg["layers"]
        E = V + (1 if cfg["bos"] else 0)
        P = cfg["seq_len"] + (1 if cfg["bos"] else 0)
        self.names, self.views = [], {}

        def add(name, shape, std=None, fill=None):
            t = torch.empty(*shape, dtype=dtype)
            if std is not None:
                torch.nn.init.normal_(t, 0.0, std)
            else:
                t.fill_(fill)
            p = torch.nn.Parameter(t)
            self.register_parameter(name.replace(".", "__"), p)
            self.names.append(name)
            return p

        std, std_out = 0.02, 0.02 / math.sqrt(2 * L)
        add("tok_emb", (E, C), std)
        if cfg["pos"] == "absolute":
            add("pos_emb", (P, C), std)
        for l in range(L):
            b = f"blocks.{l}."
            add(b + "norm1.weight", (C,), fill=1.0)
            if cfg["norm"] == "layer":
                add(b + "norm1.bias", (C,), fill=0.0)
            # One (3C,C) parameter; its row blocks are p0sim's wq, wk, wv (same init, same AdamW
            # update and decay, since AdamW is elementwise).
            qkv = torch.empty(3 * C, C, dtype=dtype)
            torch.nn.init.normal_(qkv, 0.0, std)
            self.register_parameter(f"blocks__{l}__attn__wqkv", torch.nn.Parameter(qkv))
            for i, w in enumerate(("wq", "wk", "wv")):
                self.names.append(b + "attn." + w)
                self.views[b + "attn." + w] = (f"blocks__{l}__attn__wqkv", i * C, (i + 1) * C)
            add(b + "attn.wo", (C, C), std_out)
            add(b + "norm2.weight", (C,), fill=1.0)
            if cfg["norm"] == "layer":
                add(b + "norm2.bias", (C,), fill=0.0)
            add(b + "mlp.w1", (F_, C), std)
            add(b + "mlp.w2", (C, F_), std_out)
        add("norm_f.weight", (C,), fill=1.0)
        if cfg["norm"] == "layer":
            add("norm_f.bias", (C,), fill=0.0)
        add("lm_head", (V, C), std)
        if cfg["mask"] not in ("causal", "bidirectional"):
            raise SystemExit(f"torch peer: mask {cfg['mask']} is not implemented here")
        keep = torch.ones(P, P, dtype=torch.bool)
        self.keep = keep.tril() if cfg["mask"] == "causal" else keep
        # Additive mask for baddbmm: 0 where a key is visible, -inf where it is not.
        self.bias = torch.zeros(P, P, dtype=dtype).masked_fill(~self.keep, float("-inf"))
        # Plain Python references, so the step does no getattr/string work per operator.
        self.layers = [
            dict(wqkv=getattr(self, f"blocks__{l}__attn__wqkv"),
                 wo=self.p(f"blocks.{l}.attn.wo"), w1=self.p(f"blocks.{l}.mlp.w1"),
                 w2=self.p(f"blocks.{l}.mlp.w2"), n1=f"blocks.{l}.norm1", n2=f"blocks.{l}.norm2")
            for l in range(L)]

    def p(self, name):
        if name in self.views:
            base, lo, hi = self.views[name]
            return getattr(self, base)[lo:hi]
        return getattr(self, name.replace(".", "__"))

    def matrices(self):
        return [p for n, p in self.named_parameters() if p.dim() == 2]

    def vectors(self):
        return [p for n, p in self.named_parameters() if p.dim() < 2]

    def norm(self, x, prefix):
        if self.cfg["norm"] == "layer":
            return F.layer_norm(x, x.shape[-1:], self.p(prefix + ".weight"), self.p(prefix + ".bias"), 1e-5)
        return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + 1e-5) * self.p(prefix + ".weight")

    def rope(self, x):  # (B,H,P,D), GPT-NeoX halves
        P, D = x.shape[-2], x.shape[-1]
        i = torch.arange(D // 2, dtype=torch.float64)
        ang = torch.arange(P, dtype=torch.float64)[:, None] * torch.pow(10000.0, -2.0 * i / D)[None, :]
        cos, sin = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)

    def forward(self, rows):
        """rows (B,T+1) -> logits (B*P,V), mean loss."""
        cfg = self.cfg
        B = rows.shape[0]
        inputs, targets = rows[:, :-1], rows[:, 1:]
        if cfg["bos"]:
            bos = torch.full((B, 1), cfg["vocab"], dtype=rows.dtype)
            inputs, targets = torch.cat([bos, inputs], 1), rows
        P, C, H = inputs.shape[1], cfg["d_model"], cfg["heads"]
        D = C // H
        x = F.embedding(inputs, self.p("tok_emb"))  # (B,P,C)
        if cfg["pos"] == "absolute":
            x = x + self.p("pos_emb")[:P]
        x = x.reshape(B * P, C)  # (B*P,C)
        keep, bias = self.keep[:P, :P], self.bias[:P, :P]
        scale = 1.0 / math.sqrt(D)
        for lw in self.layers:
            qkv = self.norm(x, lw["n1"]) @ lw["wqkv"].t()  # (B*P,3C)
            q, k, v = qkv.view(B, P, 3, H, D).permute(2, 0, 3, 1, 4).unbind(0)  # 3 x (B,H,P,D)
            if cfg["pos"] == "rope":
                q, k = self.rope(q), self.rope(k)
            q, k, v = (t.reshape(B * H, P, D) for t in (q, k, v))  # (B*H,P,D)
            if cfg["attn"] == "sigmoid":
                A = torch.sigmoid(torch.bmm(q, k.transpose(1, 2)) * scale) * keep
            else:
                s = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=scale)  # (B*H,P,P), masked
                if cfg["attn"] == "softmax1":
                    m = s.amax(-1, keepdim=True).clamp_min(0.0)
                    e = torch.exp(s - m)
                    A = e / (torch.exp(-m) + e.sum(-1, keepdim=True))
                else:
                    A = torch.softmax(s, -1)
            y = torch.bmm(A, v).view(B, H, P, D).transpose(1, 2).reshape(B * P, C)  # (B*P,C)
            x = torch.addmm(x, y, lw["wo"].t())
            h = self.norm(x, lw["n2"]) @ lw["w1"].t()  # (B*P,F)
            h = F.gelu(h, approximate="tanh") if cfg["act"] == "gelu" else F.relu(h)
            x = torch.addmm(x, h, lw["w2"].t())
        logits = self.norm(x, "norm_f") @ self.p("lm_head").t()  # (B*P,V)
        loss = F.cross_entropy(logits, targets.reshape(-1))
        return logits.view(B, P, -1), loss

    def adamw(self, lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1):
        """AdamW with decay on matrices only, as p0sim (DESIGN.md section 3)."""
        groups = [{"params": self.matrices(), "weight_decay": weight_decay},
                  {"params": self.vectors(), "weight_decay": 0.0}]
        # foreach: the multi-tensor update, PyTorch 1.13's fastest AdamW on CPU (~15% per step here).
        return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=1e-8, foreach=True)


def bench(configs, seconds, clip):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print(json.dumps({"blas": blas_in_use(), "gemm512_gflops": round(gemm_gflops(), 2),
                      "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "(autodetect)"),
                      "aten_capability": os.environ.get("ATEN_CPU_CAPABILITY", "(default)"),
                      "torch": torch.__version__, "threads": torch.get_num_threads()}), flush=True)
    for V, C, H, T, B, L in configs:
        cfg = dict(vocab=V, d_model=C, heads=H, layers=L, d_ff=4 * C, seq_len=T, bos=False, pos="none",
                   norm="rms", act="gelu", attn="softmax", mask="causal")
        model = TinyTransformer(cfg)
        opt = model.adamw()
        rows = torch.randint(0, V, (B, T + 1))

        def step():
            _, loss = model(rows)
            opt.zero_grad(set_to_none=True)  # the PyTorch 2 default: no per-tensor memset
            loss.backward()
            if clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            opt.step()
            return loss

        for _ in range(5):
            step()
        # Wall time, and this process's CPU time: on a shared machine the CPU-time rate is the
        # one comparable with Google Benchmark's default (CPU-time) counters.
        n, t0, c0 = 0, time.perf_counter(), time.process_time()
        while True:
            step()
            n += 1
            dt = time.perf_counter() - t0
            if dt >= seconds and n >= 5:
                break
        cpu = time.process_time() - c0
        print(json.dumps({"V": V, "C": C, "H": H, "T": T, "B": B, "L": L, "steps_per_s": n / dt,
                          "steps_per_cpu_s": n / cpu, "tokens_per_s": n * B * T / dt}), flush=True)


def run(config, steps):
    """N training steps of one configuration, on fresh random rows each step, as `p0sim train`."""
    V, C, H, T, B, L = config
    torch.set_num_threads(1)
    torch.manual_seed(1)
    cfg = dict(vocab=V, d_model=C, heads=H, layers=L, d_ff=4 * C, seq_len=T, bos=False, pos="none",
               norm="rms", act="gelu", attn="softmax", mask="causal")
    model = TinyTransformer(cfg)
    opt = model.adamw()
    for _ in range(steps):
        rows = torch.randint(0, V, (B, T + 1))
        _, loss = model(rows)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    print(json.dumps({"steps": steps, "loss": loss.item()}))
    return 0


def check(weights_dir, tokens_path, eval_dir):
    """Loss and logits of p0sim's weights on the tokens, in float64, against `p0sim eval`."""
    with open(os.path.join(weights_dir, "config.json")) as f:
        cfg = json.load(f)
    rows = torch.from_numpy(np.load(tokens_path).astype(np.int64))
    cfg["seq_len"] = rows.shape[1] - 1
    model = TinyTransformer(cfg, dtype=torch.float64)
    with torch.no_grad():
        for name in model.names:
            w = np.load(os.path.join(weights_dir, name + ".npy"))
            if tuple(w.shape) != tuple(model.p(name).shape):
                raise SystemExit(f"torch peer: {name} has shape {w.shape}, expected {tuple(model.p(name).shape)}")
            model.p(name).copy_(torch.from_numpy(w.astype(np.float64)))
        logits, loss = model(rows)
    with open(os.path.join(eval_dir, "loss.json")) as f:
        p0_loss = json.load(f)["loss"]
    p0_logits = np.load(os.path.join(eval_dir, "logits.npy")).astype(np.float64)
    diff = float(np.abs(p0_logits - logits.numpy()).max())
    scale = float(np.abs(logits.numpy()).max())
    print(f"cross-check: p0sim eval loss {p0_loss:.9f}  torch (float64) loss {loss.item():.9f}  "
          f"|diff| {abs(p0_loss - loss.item()):.3g};  max |logits diff| {diff:.3g} (max |logit| {scale:.3g})")
    ok = abs(p0_loss - loss.item()) <= 1e-5 * max(1.0, abs(loss.item())) and diff <= 1e-4 * max(1.0, scale)
    print("cross-check:", "agree (float32 rounding)" if ok else "DISAGREE")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench", help="steps/s of the training step at p0sim's benchmark configurations")
    b.add_argument("--seconds", type=float, default=3.0, help="timed seconds per configuration")
    b.add_argument("--clip", type=float, default=0.0, help="global-norm clipping inside the step (0 = off)")
    b.add_argument("--config", action="append", default=None,
                   help="V,C,H,T,B,L (repeatable); default: the three configurations of bench/README.md")
    r = sub.add_parser("run", help="one whole training process of --steps steps at one configuration")
    r.add_argument("--config", required=True, help="V,C,H,T,B,L")
    r.add_argument("--steps", type=int, required=True)
    c = sub.add_parser("check", help="compare p0sim eval's loss and logits with this implementation")
    c.add_argument("weights")
    c.add_argument("tokens")
    c.add_argument("eval_dir")
    args = ap.parse_args()
    if args.cmd == "bench":
        configs = [tuple(int(v) for v in s.split(",")) for s in args.config] if args.config else [
            (64, 64, 4, 32, 32, 2), (64, 128, 4, 64, 32, 2), (64, 32, 2, 16, 16, 2)]
        bench(configs, args.seconds, args.clip)
        return 0
    if args.cmd == "run":
        return run(tuple(int(v) for v in args.config.split(",")), args.steps)
    return check(args.weights, args.tokens, args.eval_dir)


if __name__ == "__main__":
    sys.exit(main())
