#pragma once
// The engine version names the arithmetic of every result p0sim computes: the order of the
// floating-point operations in training, probes and the cone model's Monte Carlo, the seed
// derivations and the RNG streams. Same engine version, seed and config give the same bits, for
// any thread or process count, on the CPU model the golden files were recorded on (their SIMD
// sets are in tests/golden/engine-<N>/simd.txt; README "Reproducibility" says what the promise
// covers).
//
// A change that alters any result's bits bumps this number, records tests/golden/engine-<N+1>/
// and re-runs every committed result. Every summary, results file, verdict and checkpoint carries
// the number; a checkpoint or resumable sweep of another engine version is refused.
namespace p0sim {

inline constexpr int kEngineVersion = 1;

}  // namespace p0sim
