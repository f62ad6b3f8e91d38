"""p0sim's model as a PyTorch module (DESIGN.md section 3), built from a p0sim Model's weights.

    net = p0sim.to_torch(model)          # or p0sim.to_torch(p0sim.load("runs/x"))
    logits = net(torch.tensor(tokens))   # (batch, positions, vocab), as model.run_with_cache

The module reads top to bottom like the engine: embeddings (+ learnt positions), per block
pre-norm attention and pre-norm MLP on the residual stream, a final norm and the unembedding.
Linear weights are stored (out, in) under the engine's names (blocks.0.attn.wq, ...), so
`net.state_dict()` keys are p0sim's with '.' kept. Every variant the engine trains is here:
causal, bidirectional and prefix-bidirectional masks; softmax, softmax1, sigmoid and ReLU
attention; RoPE and learnt positions; RMSNorm and LayerNorm; GELU (tanh) and ReLU.
"""
import math

import torch
import torch.nn.functional as F

NORM_EPS = 1e-5  # sim/layers/norm.hpp


class Block(torch.nn.Module):
    def __init__(self, cfg, dtype):
        super().__init__()
        C, F_ = cfg["d_model"], cfg["d_ff"]
        empty = lambda *shape: torch.nn.Parameter(torch.empty(*shape, dtype=dtype))
        self.norm1 = torch.nn.ParameterDict({"weight": empty(C)})
        self.norm2 = torch.nn.ParameterDict({"weight": empty(C)})
        if cfg["norm"] == "layer":
            self.norm1["bias"], self.norm2["bias"] = empty(C), empty(C)
        self.attn = torch.nn.ParameterDict({w: empty(C, C) for w in ("wq", "wk", "wv", "wo")})
        self.mlp = torch.nn.ParameterDict({"w1": empty(F_, C), "w2": empty(C, F_)})


class P0simTransformer(torch.nn.Module):
    def __init__(self, cfg, dtype=torch.float32):
        super().__init__()
        self.cfg = dict(cfg)
        C, V, L = cfg["d_model"], cfg["vocab"], cfg["layers"]
        P = cfg["seq_len"] + (1 if cfg["bos"] else 0)
        empty = lambda *shape: torch.nn.Parameter(torch.empty(*shape, dtype=dtype))
        self.tok_emb = empty(V + (1 if cfg["bos"] else 0), C)
        self.pos_emb = empty(P, C) if cfg["pos"] == "absolute" else None
        self.blocks = torch.nn.ModuleList(Block(cfg, dtype) for _ in range(L))
        self.norm_f = torch.nn.ParameterDict({"weight": empty(C)})
        if cfg["norm"] == "layer":
            self.norm_f["bias"] = empty(C)
        self.lm_head = empty(V, C)

    def norm(self, x, p):  # x (...,C)
        if self.cfg["norm"] == "layer":
            return F.layer_norm(x, x.shape[-1:], p["weight"], p["bias"], NORM_EPS)
        return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + NORM_EPS) * p["weight"]

    @staticmethod
    def rope(x, positions):  # x (B,H,P,D), GPT-NeoX halves; angles in double as the engine's table
        D = x.shape[-1]
        i = torch.arange(D // 2, dtype=torch.float64)
        angle = positions.to(torch.float64)[:, None] * torch.pow(10000.0, -2.0 * i / D)[None, :]
        cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)

    def attention(self, q, k, v, causal):  # (B,H,P,D) each -> (B,H,P,D)
        P, D = q.shape[-2], q.shape[-1]
        s = q @ k.transpose(-1, -2) / math.sqrt(D)  # (B,H,P,P) row = query, column = key
        keep = torch.ones(P, P, dtype=torch.bool)
        if causal:
            keep = keep.tril()
        kind = self.cfg["attn"]
        if kind == "sigmoid":
            A = torch.sigmoid(s) * keep
        elif kind == "relu":  # relu(s) / (keys the query sees)
            seen = keep.sum(-1, keepdim=True).to(s.dtype)
            A = torch.relu(s) * keep / seen
        else:
            s = s.masked_fill(~keep, float("-inf"))
            if kind == "softmax1":  # exp(s) / (1 + sum exp(s))
                m = s.amax(-1, keepdim=True).clamp_min(0.0)
                e = torch.exp(s - m)
                A = e / (torch.exp(-m) + e.sum(-1, keepdim=True))
            else:
                A = torch.softmax(s, -1)
        return A @ v

    def blocks_forward(self, x, positions, causal):  # x (B,P,C) embeddings -> final normed (B,P,C)
        B, P, C = x.shape
        H = self.cfg["heads"]
        D = C // H
        for blk in self.blocks:
            h = self.norm(x, blk.norm1)
            q, k, v = (torch.nn.functional.linear(h, blk.attn[w]).view(B, P, H, D).transpose(1, 2)
                       for w in ("wq", "wk", "wv"))  # (B,H,P,D)
            if self.cfg["pos"] == "rope":
                q, k = self.rope(q, positions), self.rope(k, positions)
            z = self.attention(q, k, v, causal).transpose(1, 2).reshape(B, P, C)
            x = x + F.linear(z, blk.attn["wo"])
            h = F.linear(self.norm(x, blk.norm2), blk.mlp["w1"])
            h = F.gelu(h, approximate="tanh") if self.cfg["act"] == "gelu" else F.relu(h)
            x = x + F.linear(h, blk.mlp["w2"])
        return self.norm(x, self.norm_f)

    def forward(self, tokens):
        """tokens (B,T) int -> logits (B,P,V); with bos=true, BOS (id V) is prepended (P = T+1)."""
        if tokens.dim() == 1:
            tokens = tokens[None]
        if self.cfg["bos"]:
            bos = torch.full((tokens.shape[0], 1), self.cfg["vocab"], dtype=tokens.dtype)
            tokens = torch.cat([bos, tokens], 1)
        P = tokens.shape[1]
        x = F.embedding(tokens, self.tok_emb)
        if self.pos_emb is not None:
            x = x + self.pos_emb[:P]
        positions = torch.arange(P)
        mask = self.cfg["mask"]
        if mask == "prefix-bidirectional":
            # Position t is read from a bidirectional pass over the prefix 0..t.
            out = [self.blocks_forward(x[:, : t + 1], positions[: t + 1], False)[:, t] for t in range(P)]
            final = torch.stack(out, 1)
        else:
            final = self.blocks_forward(x, positions, mask == "causal")
        return F.linear(final, self.lm_head)


def to_torch(model, dtype=torch.float32):
    """A PyTorch module computing what the p0sim Model computes, holding a copy of its weights."""
    cfg = model.config
    net = P0simTransformer(cfg, dtype)
    ours = model.state_dict()
    theirs = dict(net.named_parameters())
    if set(ours) != set(theirs):
        raise ValueError(f"to_torch: parameter names differ: {sorted(set(ours) ^ set(theirs))}")
    with torch.no_grad():
        for name, value in ours.items():
            theirs[name].copy_(torch.from_numpy(value))
    return net
