#!/usr/bin/python3
"""NumPy peer of the cone Monte Carlo (bench/bench_cone.cpp): the same full-vector estimator.

gauss model, causal mask, float32: per sequence draw T value vectors v = m u + sigma z in R^d,
take prefix sums, norms of every prefix mean o_t, the cosine to the axis, the gap
||o_0|| - ||o_t||, the indicator ||o_0|| > ||o_t|| and "position 0 strictly largest", and
accumulate their sums and sums of squares (for means and CIs). Vectorised over a batch of
sequences; one core (BLAS/OpenMP threads pinned to 1). Prints sequences/s.
"""
import argparse
import os
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402


def run(d, T, m, sigma, batch, seconds, seed):
    rng = np.random.default_rng(seed)
    inv_n = (1.0 / np.arange(1, T + 1, dtype=np.float32))[None, :]  # (1,T)
    inv_n2 = inv_n * inv_n
    sums = np.zeros((5, T), dtype=np.float64)
    sq = np.zeros((5, T), dtype=np.float64)
    largest = 0
    z = np.empty((batch, T, d), dtype=np.float32)
    done = 0
    t0 = time.perf_counter()
    while True:
        rng.standard_normal(out=z, dtype=np.float32)  # (B,T,d)
        z *= np.float32(sigma)
        z[:, :, 0] += np.float32(m)  # v = m u + sigma z, u = e_0
        s = np.cumsum(z, axis=1)  # (B,T,d) prefix sums
        ns = np.einsum("btd,btd->bt", s, s)  # (B,T) ||S_t||^2
        n2 = ns * inv_n2  # ||o_t||^2
        nrm = np.sqrt(n2)
        cos = s[:, :, 0] / np.sqrt(ns)
        gap = nrm[:, :1] - nrm
        beats = (n2[:, :1] > n2).astype(np.float32)
        largest += int(np.count_nonzero((n2[:, 1:] < n2[:, :1]).all(axis=1)))
        for i, x in enumerate((n2, nrm, cos, gap, beats)):
            sums[i] += x.sum(axis=0, dtype=np.float64)
            sq[i] += np.square(x, dtype=np.float64).sum(axis=0)
        done += batch
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            break
    mean_n2_last = sums[0, -1] / done
    expected = m * m + d * sigma * sigma / T
    if abs(mean_n2_last - expected) > 0.05 * expected:
        raise SystemExit(f"numpy peer: E||o_T-1||^2 = {mean_n2_last}, expected {expected}")
    return done / elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--T", type=int, default=64)
    ap.add_argument("--m", type=float, default=1.0)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rate = run(a.d, a.T, a.m, a.sigma, a.batch, a.seconds, a.seed)
    print(f"numpy sequences/s {rate:.0f} vectors/s {rate * a.T:.0f} (d={a.d} T={a.T} float32, 1 core)")


if __name__ == "__main__":
    main()
