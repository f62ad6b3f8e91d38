#pragma once
// Helpers shared by the theory tests (tests/theory_*.cpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/stats.hpp"
#include "theory/cone.hpp"

namespace p0sim::test {

// The candidates that lie in [0, T), sorted, without repeats (T/2 and T-1 coincide for small T).
inline std::vector<int> positions_within(int T, std::vector<int> candidates) {
  candidates.erase(std::remove_if(candidates.begin(), candidates.end(), [T](int t) { return t >= T; }),
                   candidates.end());
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  return candidates;
}

// Count, mean and M2 equal to the bit: what "identical for any thread count" means for a statistic.
inline bool same_bits(const RunningStats& a, const RunningStats& b) {
  return a.n == b.n && std::memcmp(&a.mean, &b.mean, sizeof(double)) == 0 &&
         std::memcmp(&a.m2, &b.m2, sizeof(double)) == 0;
}

// A point of the Gaussian cone model: value vectors N(m u, sigma^2 I_d) per head, u a fixed unit vector.
inline theory::ConePoint gauss_point(int d, int T, double m, double sigma, int heads = 1,
                                     theory::AttnMask mask = theory::AttnMask::causal) {
  theory::ConePoint p;
  p.model = theory::ValueModel::gauss;
  p.mask = mask;
  p.d = d;
  p.T = T;
  p.m = m;
  p.sigma = sigma;
  p.heads = heads;
  return p;
}

}  // namespace p0sim::test
