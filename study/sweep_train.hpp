#pragma once
// The train kind of `p0sim sweep`: each grid point is a set of run options (the base, then an
// experiment variant's overrides, then the point's grid values), each run trains the model at its
// point with a seed derived from the point, and its results row is the one results schema
// (study/results.hpp).
#include <optional>
#include <string>
#include <vector>

#include "study/experiment.hpp"
#include "study/run_options.hpp"
#include "study/sweep_run.hpp"

namespace p0sim::study {

struct TrainSweepSpec {
  OptionValues base;                           // every run option, resolved (the CLI's over an experiment's base)
  std::optional<ExperimentConfig> experiment;  // its variants make the grid key `variant`
  std::string experiment_path;                 // as given, for messages and sweep.toml
  std::vector<std::string> grid;               // KEY=LIST
  int seeds = 1;
  bool keep_runs = false;  // each run also writes its own files to DIR/runs/<point>/seed-<i>/
};

// Validates the grid and every point (UsageError naming the grid key or the option).
ResolvedSweep resolve_train_sweep(const TrainSweepSpec& spec);

}  // namespace p0sim::study
