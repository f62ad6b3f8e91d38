"""run_with_cache hands back every activation by TransformerLens hook name, consistent with itself,
with the probes and with the PyTorch twin."""
import numpy as np
import pytest

import p0sim
from conftest import SMALL

VARIANTS = [
    dict(),
    dict(bos=True, pos="absolute", norm="layer", act="relu"),
    dict(pos="rope", attn="softmax1"),
    dict(mask="bidirectional", attn="sigmoid"),
    dict(attn="relu"),
    dict(mask="prefix-bidirectional"),
    dict(init="torch"),
]
ids = lambda v: ",".join(f"{k}={x}" for k, x in v.items()) or "default"


def trained_model(**variant):
    model = p0sim.Model(**{**SMALL, "steps": 20, "probe_every": 0, **variant})
    model.train()
    return model


def expected_names(L, absolute, prefix):
    names = {"hook_embed"} | ({"hook_pos_embed"} if absolute else set())
    for l in range(L):
        b = f"blocks.{l}."
        names |= {b + n for n in ("hook_resid_pre", "hook_resid_mid", "hook_resid_post", "attn.hook_pattern")}
        if not prefix:
            names |= {b + n for n in ("ln1.hook_normalized", "ln1.hook_scale", "ln2.hook_normalized",
                                      "ln2.hook_scale", "attn.hook_q", "attn.hook_k", "attn.hook_v",
                                      "attn.hook_attn_scores", "attn.hook_z", "hook_attn_out",
                                      "mlp.hook_pre", "mlp.hook_post", "hook_mlp_out")}
    if not prefix:
        names |= {"ln_final.hook_normalized", "ln_final.hook_scale"}
    return names


@pytest.mark.parametrize("variant", VARIANTS, ids=ids)
def test_every_hook_is_named_and_shaped_as_transformer_lens(variant):
    model = trained_model(**variant)
    cfg = model.config
    B, T, C, H, F, V, L = 3, 16, cfg["d_model"], cfg["heads"], cfg["d_ff"], cfg["vocab"], cfg["layers"]
    P, D = T + cfg["bos"], C // H
    tokens = np.random.default_rng(0).integers(0, V, size=(B, T))
    logits, cache = model.run_with_cache(tokens)
    assert logits.shape == (B, P, V)
    assert set(cache) == expected_names(L, cfg["pos"] == "absolute", cfg["mask"] == "prefix-bidirectional")
    shapes = {"hook_pattern": (B, H, P, P), "hook_attn_scores": (B, H, P, P), "hook_q": (B, P, H, D),
              "hook_k": (B, P, H, D), "hook_v": (B, P, H, D), "hook_z": (B, P, H, D),
              "hook_pre": (B, P, F), "hook_post": (B, P, F), "hook_scale": (B, P, 1)}
    for name, array in cache.items():
        assert array.dtype == np.float32, name
        assert array.shape == shapes.get(name.split(".")[-1], (B, P, C)), name


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("variant", [VARIANTS[0], VARIANTS[2]], ids=ids)
def test_the_hooks_add_up_to_the_residual_stream(variant):
    model = trained_model(**variant)
    tokens = np.random.default_rng(1).integers(0, 64, size=(4, 16))
    logits, cache = model.run_with_cache(tokens)
    for l in range(model.config["layers"]):
        b = f"blocks.{l}."
        # float32 sums of O(1) terms: agreement to a few ulps of the stream's scale
        np.testing.assert_allclose(cache[b + "hook_resid_pre"] + cache[b + "hook_attn_out"],
                                   cache[b + "hook_resid_mid"], atol=1e-5)
        np.testing.assert_allclose(cache[b + "hook_resid_mid"] + cache[b + "hook_mlp_out"],
                                   cache[b + "hook_resid_post"], atol=1e-5)
        s = cache[b + "attn.hook_attn_scores"]
        softmax1 = variant.get("attn") == "softmax1"
        e = np.exp(s - np.maximum(s.max(-1, keepdims=True), 0 if softmax1 else -np.inf))
        denom = e.sum(-1, keepdims=True) + (np.exp(-np.maximum(s.max(-1, keepdims=True), 0)) if softmax1 else 0)
        np.testing.assert_allclose(e / denom, cache[b + "attn.hook_pattern"], atol=1e-6)
        np.testing.assert_allclose(gelu(cache[b + "mlp.hook_pre"]), cache[b + "mlp.hook_post"], atol=1e-6)
        assert np.all(np.isneginf(s[:, :, 0, 1:]))  # causal: query 0 sees key 0 only
    assert np.array_equal(cache["blocks.0.hook_resid_pre"], cache["hook_embed"])


def test_cache_arrays_are_read_only_views_that_a_later_pass_leaves_alone():
    model = trained_model()
    tokens = np.random.default_rng(2).integers(0, 64, size=(2, 16))
    _, first = model.run_with_cache(tokens)
    kept = first["blocks.1.hook_resid_post"].copy()
    assert not first["blocks.1.hook_resid_post"].flags.writeable
    assert first["blocks.1.attn.hook_q"].base is not None  # a view of the pass's buffer, not a copy
    model.run_with_cache(tokens[::-1].copy())
    assert np.array_equal(first["blocks.1.hook_resid_post"], kept)


def test_names_filter_keeps_only_the_named_hooks():
    model = trained_model()
    tokens = np.zeros((2, 16), dtype=np.int64)
    _, cache = model.run_with_cache(tokens, names_filter=lambda n: n.endswith("hook_pattern"))
    assert sorted(cache) == ["blocks.0.attn.hook_pattern", "blocks.1.attn.hook_pattern"]
    _, cache = model.run_with_cache(tokens, names_filter="blocks.1.hook_resid_post")
    assert list(cache) == ["blocks.1.hook_resid_post"]


def test_nope_attention_on_one_repeated_token_is_exactly_uniform():
    # Gu et al.'s negative control: with no positions, every key holds the same state.
    model = trained_model()
    _, cache = model.run_with_cache(np.full((2, 16), 7))
    A = cache["blocks.1.attn.hook_pattern"]
    for t in range(16):
        assert np.all(np.abs(A[:, :, t, : t + 1] - 1.0 / (t + 1)) <= 2e-7)


def test_probes_of_the_probe_batch_equal_the_last_probe_of_training(trained):
    model, result, _ = trained
    rows, active = model.probe_batch()
    _, cache = model.run_with_cache(rows[:, :-1])
    got = p0sim.probes(cache, active=active)
    trace, heads = result["trace"], result["heads"]
    last = trace["step"] == trace["step"].max()
    for name, values in got.items():
        if name == "heads":
            continue
        assert np.array_equal(values, trace["layer" if name == "layer" else name][last]), name
    last_heads = heads["step"] == heads["step"].max()
    for name, values in got["heads"].items():
        assert np.array_equal(values.ravel(), heads[name][last_heads]), name


@pytest.mark.parametrize("bad, message", [
    (np.zeros((2, 16)), "integer token ids"),
    (np.full((2, 16), 64), r"ids in 0..63"),
    (np.zeros((2, 2, 2), dtype=int), "dimensions"),
    (np.zeros((2, 1), dtype=int), "at least 2 positions"),
])
def test_bad_tokens_raise_value_error(bad, message):
    with pytest.raises(ValueError, match=message):
        p0sim.Model(**SMALL).run_with_cache(bad)


@pytest.mark.parametrize("variant", VARIANTS, ids=ids)
def test_to_torch_matches_the_engine_within_1e_5(variant):
    torch = pytest.importorskip("torch")
    model = trained_model(**variant)
    tokens = np.random.default_rng(3).integers(0, 64, size=(8, 16))
    net = p0sim.to_torch(model)
    with torch.no_grad():
        theirs = net(torch.from_numpy(tokens)).numpy()
    assert np.abs(model(tokens) - theirs).max() <= 1e-5
