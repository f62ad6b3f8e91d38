#pragma once
// The laws behind the bigram tasks (markov, backcopy, firstrecall's markov fillers): random Dirichlet
// bigram rows, a chain's stationary law, and backcopy's stationary law over the pair (x_{-1}, x_0).
// DataGenerator samples from them; nothing here knows a task.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/rng.hpp"

namespace p0sim::sim {

// (V,V) row-major bigram matrix, each row a draw from the symmetric Dirichlet(alpha) on V tokens,
// with every entry at least 1e-12 (then renormalised) so the chain is irreducible.
std::vector<double> dirichlet_bigrams(PhiloxStream& rng, int V, double alpha);

// Stationary law of a row-stochastic matrix P (n,n): solves pi (P - I) = 0 with sum(pi) = 1.
std::vector<double> stationary_of(const std::vector<double>& P, int n);

// Backcopy (a trigger is followed by a copy of the token before it) on the bigram matrix P (V,V):
// the stationary law of the pair (x_{-1}, x_0), (V,V) row-major, pair[a*V + c] = P(x_{-1} = a, x_0 = c).
std::vector<double> backcopy_pair_law(const std::vector<double>& P, const std::vector<char>& is_trigger, int V);

// Entropy in nats of the law p (n).
double entropy_of(const double* p, int n);

// cdf (n): the running sums of p (n), normalised so the last entry is exactly 1.
inline void cumulate(const double* p, int n, double* cdf) {
  double acc = 0.0;
  for (int i = 0; i < n; ++i) cdf[i] = acc += p[i];
  for (int i = 0; i < n; ++i) cdf[i] /= acc;  // the last entry is exactly 1: u < 1 always lands
}

// The index drawn by a uniform u in [0, 1) from the cumulative law cdf (n).
inline int sample_cdf(const double* cdf, int n, double u) {
  const double* it = std::upper_bound(cdf, cdf + n, u);
  return static_cast<int>(std::min<std::ptrdiff_t>(it - cdf, n - 1));
}

}  // namespace p0sim::sim
