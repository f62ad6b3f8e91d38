#pragma once
// The engine version names the arithmetic of every result p0sim computes: the order of the
// floating-point operations in training, probes and the cone model's Monte Carlo, the seed
// derivations and the RNG streams. Same engine version, seed and config give the same bits, for
// any thread or process count, on any x86-64 CPU with AVX2 and FMA, for a build whose compiler,
// arithmetic flags and Eigen match tests/golden/engine-<N>/arithmetic.txt (README
// "Reproducibility" says what the promise covers).
//
// Engine 2: -march=x86-64-v3 instead of -march=native, -ffp-contract=off, and a correctly rounded
// sqrt in AdamW (Eigen's fast-math sqrt rounds differently on Intel and AMD).
//
// A change that alters any result's bits bumps this number, records tests/golden/engine-<N+1>/
// and re-runs every committed result. Every summary, results file, verdict and checkpoint carries
// the number; a checkpoint or resumable sweep of another engine version is refused.
namespace p0sim {

inline constexpr int kEngineVersion = 2;

}  // namespace p0sim
