#pragma once
// The theory kind of `p0sim sweep`: each grid point is a point of the cone model
// (theory/cone.hpp), each run its Monte Carlo at a seed derived from the point, and its results
// row the closed forms and Monte-Carlo estimates of position 0's lead at t = 1 and t = T-1.
#include <cstdint>
#include <string>
#include <vector>

#include "study/sweep_run.hpp"

namespace p0sim::study {

// The grid keys of a theory sweep, in the order messages list them.
const std::vector<std::string>& theory_grid_keys();

struct TheorySweepSpec {
  std::vector<std::string> grid;  // KEY=LIST
  int seeds = 1;
  std::int64_t trials = 2000;  // Monte-Carlo sequences per run
  std::string seed = "1";      // the base seed, as given
};

// Validates the grid and every point (UsageError naming the grid key or the point).
ResolvedSweep resolve_theory_sweep(const TheorySweepSpec& spec);

}  // namespace p0sim::study
