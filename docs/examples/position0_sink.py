# %% [markdown]
# # From a trained model to its position-0 sink, in Python
#
# A notebook-style walk-through (the `# %%` cells open as a notebook in VS Code or Jupytext; run
# as a script it prints everything). From the repository root, after `bash scripts/build.sh`:
#
#     PYTHONPATH=build/python /usr/bin/python3 docs/examples/position0_sink.py
#
# It trains the headline's model (configs/p0sink.toml: firstrecall, causal mask, no positional
# encoding, no BOS) and its control (the prefix-bidirectional mask, under which position 0 is
# not special), then asks of each, with the activation cache: do later heads attend to position
# 0, and is position 0's residual vector larger than the others (the "high norm" of the P0-Sink
# circuit)? About half a minute on one core.

# %%
import os
import sys

import numpy as np

import p0sim

print("p0sim", p0sim.__version__, "engine version", p0sim.engine_version)

# The options are `p0sim train`'s with '_' for '-'; these are configs/p0sink.toml's.
HEADLINE = dict(task="firstrecall", vocab=64, d_model=64, heads=4, layers=2, seq_len=16, batch=64,
                triggers=4, trigger_prob=0.1, steps=300, lr=3e-3, weight_decay=0.1, clip=1.0,
                seed=1, probe_every=50, probe_batch=128)
# The test suite runs this walk-through with fewer steps so that it cannot go stale.
HEADLINE["steps"] = int(os.environ.get("P0SIM_EXAMPLE_STEPS", HEADLINE["steps"]))

# %% [markdown]
# ## 1. Train the model and its control
# `train()` runs the same engine as the CLI: the same options and seed give the same bits as
# `p0sim train`. It returns the probes logged through training (trace.csv's and heads.csv's
# columns) and when each claim emerged.

# %%
models = {}
for name, variant in [("causal", {}), ("prefix-bidirectional", {"mask": "prefix-bidirectional"})]:
    model = p0sim.Model(**HEADLINE, **variant)
    run = model.train()
    trace, heads = run["trace"], run["heads"]             # trace.csv's and heads.csv's columns
    at_end = (heads["step"] == heads["step"].max()) & (heads["layer"] == 1)
    print(f"{name:>21}: final loss {run['final_loss']:.3f}, recall accuracy {trace['accuracy'][-1]:.3f}, "
          f"layer-1 heads' attention to key 0 from the trigger queries "
          f"{np.round(heads['attn_to_0_active'][at_end], 3)}; first step each claim held to the end "
          f"(None: never) {run['emergence']}")
    models[name] = model

# %% [markdown]
# ## 2. One forward pass with every activation
# The probe batch is the one training probed; `run_with_cache` names activations as
# TransformerLens does. Patterns are (batch, head, query, key).

# %%
model = models["causal"]
rows, active = model.probe_batch()            # rows (N, T+1): inputs and next-token targets
logits, cache = model.run_with_cache(rows[:, :-1])
pattern = cache["blocks.1.attn.hook_pattern"]
print("hooks:", len(cache), "e.g.", sorted(cache)[:4])
print("blocks.1.attn.hook_pattern", pattern.shape)

# %% [markdown]
# ## 3. Where do layer-1 heads look?
# The task: at a trigger token, recall the first token. A head that has *found* position 0 puts
# its weight on key 0 from the trigger queries (the `active` flags), and not from the others.

# %%
def mean_attention_to_key0(pattern, queries):
    """(B,H,P,P) pattern, (B,P) bool queries -> (H,) mean weight on key 0 over those queries."""
    to0 = pattern[..., 0]                                  # (B,H,P)
    q = np.broadcast_to(queries[:, None, :], to0.shape)
    return np.array([to0[:, h][q[:, h]].mean() for h in range(to0.shape[1])])

later = np.zeros_like(active)
later[:, 1:] = True                                       # every query but position 0 itself
for name, m in models.items():
    _, c = m.run_with_cache(rows[:, :-1])
    p = c["blocks.1.attn.hook_pattern"]
    print(f"{name:>21}: layer-1 heads' weight on key 0, trigger queries "
          f"{np.round(mean_attention_to_key0(p, active & later), 3)}, other queries "
          f"{np.round(mean_attention_to_key0(p, ~active & later), 3)}")

# %% [markdown]
# A text picture of the head that looks at key 0 most: the mean pattern over the probe batch.

# %%
head = int(np.argmax(mean_attention_to_key0(pattern, active & later)))
mean = pattern[:, head].mean(axis=0)                      # (P,P), row = query
shades = " .:-=+*#%@"
print(f"layer 1 head {head}, mean pattern (row = query, column = key):")
for i, row in enumerate(mean):
    print(f"  q{i:2d} " + "".join(shades[min(9, int(v * 10))] for v in row[: i + 1]))

# %% [markdown]
# ## 4. Is position 0's residual vector large?
# The P0-Sink circuit would give position 0 a residual norm far above the other positions'
# (p0_norm_ratio >> 1) in one fixed direction (p0_cos near 1). `p0sim.probes` computes
# trace.csv's metrics on this cache, exactly as training's probe does.

# %%
for l in range(HEADLINE["layers"]):
    resid = cache[f"blocks.{l}.hook_resid_post"]           # (B,P,C)
    norms = np.linalg.norm(resid, axis=-1).mean(axis=0)   # (P,)
    print(f"layer {l}: |h| at position 0 {norms[0]:.3f}, mean elsewhere {norms[1:].mean():.3f}")
metrics = p0sim.probes(cache, active=active)
print("p0_norm_ratio per layer", np.round(metrics["p0_norm_ratio"], 3),
      "p0_cos per layer", np.round(metrics["p0_cos"], 3))

# %% [markdown]
# What this shows at this budget (seed 1): the causal model's layer-1 heads put ~0.9 of their
# weight on key 0 from the trigger queries and ~0.02 from the others; the control's spread theirs
# (~0.19 against ~0.15). The mask alone lets the model *find* position 0. But position 0's
# residual norm is *below* the others' (p0_norm_ratio < 1): the high-norm direction of the
# P0-Sink circuit did not form, as in every run of the README's search. Emergence needs the
# recall accuracy to reach 0.9 as well, which 300 steps at seed 1 do not give.

# %% [markdown]
# ## 5. Pictures
# `p0sim report DIR` draws every head of a saved run in one self-contained HTML page; with
# matplotlib installed, this cell draws the heads of layer 1 here.

# %%
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: skipping the figure (apt-get install python3-matplotlib)")
    sys.exit(0)
fig, axes = plt.subplots(1, pattern.shape[1], figsize=(3 * pattern.shape[1], 3))
for h, ax in enumerate(axes):
    ax.imshow(pattern[:, h].mean(axis=0), vmin=0, vmax=1, cmap="viridis")
    ax.set_title(f"layer 1 head {h}")
    ax.set_xlabel("key")
axes[0].set_ylabel("query")
fig.savefig("position0_sink.png", dpi=100, bbox_inches="tight")
print("wrote position0_sink.png")
