#pragma once
// Monte Carlo twin of theory/cone.hpp: simulates the actual value vectors (full-vector sampling,
// prefix sums, norms), one counter-based Philox stream per trial, so the result does not depend
// on the thread count.
#include <cstdint>
#include <vector>

#include "common/stats.hpp"
#include "theory/cone.hpp"

namespace p0sim::theory {

struct McOptions {
  std::int64_t trials = 10000;
  std::uint64_t seed = 1;
  int threads = 1;
};

// Running statistics per requested position (same order as `positions`) and quantity
// (indexed by static_cast<int>(Quantity)).
struct McResult {
  std::vector<int> positions;
  std::vector<std::vector<RunningStats>> stats;  // [position index][quantity]
};

McResult simulate(const ConePoint& p, const std::vector<int>& positions, const McOptions& opt);

}  // namespace p0sim::theory
