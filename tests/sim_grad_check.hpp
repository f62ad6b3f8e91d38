#pragma once
// Central finite differences for gradient checks in double.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/rng.hpp"

namespace p0sim::test {

// Scale-free error of an analytic gradient g against central differences of `loss` over the
// entries `idx` of the buffer x: ||g - g_fd|| / ||g + g_fd|| (mlpack's ann tests use the
// elementwise version). Returns 0 when both are zero (a tensor the loss does not touch); the
// caller checks that such tensors are expected to be untouched.
// h = 1e-5 in double: truncation error ~h^2 * f''' ~ 1e-10 and round-off ~1e-16 * |f| / h ~ 1e-11,
// both far below 1e-6 of gradients that are O(1e-2) or larger.
inline double fd_error(double* x, const double* g, const std::vector<Eigen::Index>& idx,
                       const std::function<double()>& loss, double h = 1e-5) {
  double diff2 = 0, sum2 = 0;
  for (Eigen::Index i : idx) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = loss();
    x[i] = saved - h;
    const double down = loss();
    x[i] = saved;
    const double fd = (up - down) / (2 * h);
    diff2 += (g[i] - fd) * (g[i] - fd);
    sum2 += (g[i] + fd) * (g[i] + fd);
  }
  if (sum2 == 0) return diff2 == 0 ? 0.0 : 1.0;
  return std::sqrt(diff2 / sum2);
}

inline std::vector<Eigen::Index> all_indices(Eigen::Index n) {
  std::vector<Eigen::Index> out(static_cast<std::size_t>(n));
  for (Eigen::Index i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = i;
  return out;
}

// Up to k distinct indices of 0..n-1, drawn from a seeded stream.
inline std::vector<Eigen::Index> sample_indices(Eigen::Index n, Eigen::Index k, PhiloxStream& rng) {
  if (n <= k) return all_indices(n);
  std::vector<Eigen::Index> all = all_indices(n);
  for (Eigen::Index i = 0; i < k; ++i) {  // partial Fisher-Yates
    const auto j = i + static_cast<Eigen::Index>(rng.below(static_cast<std::uint32_t>(n - i)));
    std::swap(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(j)]);
  }
  all.resize(static_cast<std::size_t>(k));
  return all;
}

inline void fill_normal(double* x, Eigen::Index n, double sigma, PhiloxStream& rng, double mean = 0.0) {
  for (Eigen::Index i = 0; i < n; ++i) x[i] = mean + sigma * rng.normal();
}

}  // namespace p0sim::test
