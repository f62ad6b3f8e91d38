"""p0sim in Python: the engine's models, training, activation caches, probes and theory, in-process.

    import p0sim
    model = p0sim.Model(task="firstrecall", d_model=32, layers=2, steps=300, probe_every=100)
    run = model.train()                            # the CLI's bits for the same options and seed
    logits, cache = model.run_with_cache(tokens)   # TransformerLens-style hook names
    cache["blocks.1.attn.hook_pattern"]            # (batch, head, query, key)
    p0sim.probes(cache)                            # trace.csv's metrics for this pass
    model = p0sim.load("runs/x")                   # any finished run directory
    net = p0sim.to_torch(model)                    # the same model in PyTorch

Options are `p0sim train`'s with '_' for '-'; bad ones raise ValueError with the CLI's message.
"""
import numpy as np

from . import _core
from ._core import Model, engine_version, load, __version__  # noqa: F401
from . import theory  # noqa: F401

__all__ = ["Model", "ActivationCache", "load", "probes", "to_torch", "theory", "engine_version"]


class ActivationCache(dict):
    """Every activation of one forward pass, by TransformerLens hook name.

    Names (B batch, P positions, C d_model, H heads, D C/H, F d_ff):
      hook_embed (B,P,C), hook_pos_embed (B,P,C) with learnt positions;
      blocks.{l}.hook_resid_pre / hook_resid_mid / hook_resid_post (B,P,C);
      blocks.{l}.ln1.hook_normalized (B,P,C), blocks.{l}.ln1.hook_scale (B,P,1), same for ln2;
      blocks.{l}.attn.hook_q / hook_k / hook_v / hook_z (B,P,H,D) (q and k after RoPE);
      blocks.{l}.attn.hook_attn_scores (B,H,P,P) (q.k/sqrt(D), -inf where masked);
      blocks.{l}.attn.hook_pattern (B,H,P,P) (row = query, column = key);
      blocks.{l}.hook_attn_out, blocks.{l}.hook_mlp_out (B,P,C);
      blocks.{l}.mlp.hook_pre / hook_post (B,P,F); ln_final.hook_normalized (B,P,C).
    With the prefix-bidirectional mask a position is read from its own pass over its prefix, and
    only the residual stream (resid_pre/mid/post) and hook_pattern exist per position.
    Arrays that are the engine's own buffers are read-only views (no copy); the rest are computed
    from them. Position 0 is the BOS position when the model has bos=True.
    """

    def __init__(self, arrays, run):
        super().__init__(arrays)
        self.run = run  # the pass's model, for probes()


def _run_with_cache(self, tokens, names_filter=None):
    """One forward pass over tokens (batch, pos) or (pos) of ids in 0..vocab-1: (logits, cache).

    logits (B,P,V); cache an ActivationCache. names_filter: None (all), a hook name, a list of
    names, or a callable name -> bool. NoPE and RoPE models take any length >= 2; learnt
    positions at most the trained length."""
    logits, arrays, run = _core._run_with_cache(self, np.asarray(tokens), names_filter)
    return logits, ActivationCache(arrays, run)


def _call(self, tokens):
    """logits (B,P,V) of tokens, as run_with_cache without the cache."""
    return _core._run_with_cache(self, np.asarray(tokens), [])[0]


Model.run_with_cache = _run_with_cache
Model.__call__ = _call


def probes(cache, active=None, sink_eps=0.3):
    """The probe metrics of a cache's pass, as trace.csv and heads.csv define them.

    Returns {metric: array (L,)} for every per-layer column of trace.csv (p0_norm_ratio, p0_cos,
    mid_*, sink_rate, sink_1, ...) and "heads": {metric: array (L,H)} for heads.csv's columns.
    active: (batch, positions) bool flags of the task's active queries (Model.probe_batch() gives
    the training probe's), needed for attn_to_0_active. Needs at least 2 rows (p0_cos is pairwise)."""
    if not isinstance(cache, ActivationCache):
        raise TypeError("probes: an ActivationCache from Model.run_with_cache is accepted")
    return _core._probes(cache.run, None if active is None else np.asarray(active, dtype=bool), sink_eps)


def to_torch(model, dtype=None):
    """The model as a PyTorch module (p0sim.torch_model.P0simTransformer) with a copy of its weights."""
    import torch
    from .torch_model import to_torch as build
    return build(model, dtype or torch.float32)
