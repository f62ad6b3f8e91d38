#pragma once
// Helpers shared by the Monte-Carlo tests (tests/theory_mc_*.cpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/stats.hpp"

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

}  // namespace p0sim::test
