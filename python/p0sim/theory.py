"""The cone model and the hand-wired circuit, with the columns of `p0sim theory cone` and
`p0sim theory circuit` CSVs (the same writer produces both)."""
import csv
import io

import numpy as np

from . import _core


def _columns(text):
    rows = list(csv.DictReader(io.StringIO(text)))
    out = {}
    for name in rows[0].keys() if rows else []:
        values = [r[name] for r in rows]
        try:
            out[name] = np.array([int(v) for v in values])
            continue
        except ValueError:
            pass
        try:
            out[name] = np.array([float(v) if v != "" else np.nan for v in values])
        except ValueError:
            out[name] = values
    return out


def cone(model="gauss", mask="causal", d=64, T=16, theta=1.0, mu=1.0, sigma=1.0, m=1.0, heads=1,
         trials=10000, seed=1, threads=1, estimator="full"):
    """One point of the cone model at every position t < T: closed forms next to Monte Carlo.

    Returns columns (one entry per position and quantity): model, mask, d, T, t, theta, mu, sigma,
    m, heads, quantity, closed_form (NaN where none exists), mc_mean, mc_ci99_low, mc_ci99_high,
    z, trials, seed. Arguments as `p0sim theory cone` (one value each); the GIL is released while
    the Monte Carlo runs."""
    return _columns(_core._cone_csv(model, mask, d, T, theta, mu, sigma, m, heads, trials, seed, threads, estimator))


def circuit(**point):
    """The hand-wired P0-sink circuit run in the engine's forward, at one point.

    Keywords as `p0sim theory circuit` (d, T, vocab, heads, alpha, beta, c, neuron_scale,
    sink_gain, mask, sequences, models, seed, sink_eps). Returns the CSV row's columns (one value
    each) and "samples": position 0's readouts, the identification margins and each sequence's
    first two tokens."""
    text, samples = _core._circuit(**point)
    row = {k: (v[0] if isinstance(v, list) else v.item()) for k, v in _columns(text).items()}
    row["samples"] = {k: np.asarray(v) for k, v in samples.items()}
    return row
