#pragma once
// `p0sim experiment` without the CLI: one training run per (variant, seed) of an experiment TOML
// (experiment_config.hpp) on the thread pool, and its results.csv. The verdict on the claims is
// verdict.hpp, a pure function of the runs' metrics.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/train.hpp"
#include "study/experiment_config.hpp"
#include "study/results.hpp"
#include "study/run_options.hpp"
#include "study/stats.hpp"
#include "study/verdict.hpp"

namespace p0sim::study {

using sim::TrainConfig;
using sim::TrainResult;

// A finished run's record, in its run directory.
inline constexpr const char* kRunRecord = "record.ckpt";

// What run_experiment tells its caller as runs start and finish, each call under one lock (so a
// caller may print without its own). A run found finished on --resume is reported done but never
// started; `from_step` is 0 for a fresh run and the checkpoint's step for a resumed one.
struct ExperimentProgress {
  std::function<void(const std::string& variant, int seed_index, int from_step, int steps)> on_start;
  std::function<void(const RunRecord&)> on_done;
};

// Trains every (variant, seed) job on `threads` threads (each run single-threaded) and writes
// out_dir/runs/<variant>/seed-<i>/ with the files `p0sim train` writes. Returns the records in
// (variant order, seed) order whatever the thread count; `progress` reports runs as they start and
// finish. The first failing job (in that order) is rethrown after all stop.
// Each run keeps its final checkpoint (and one every `checkpoint-every` steps) and its record
// (kRunRecord: the final checkpoint without weights). With `resume`, a run whose record, or final
// checkpoint, and summary.json exist is not trained again (its metrics come from them) and a
// partial run continues from its newest checkpoint, so the results are the bytes of an
// uninterrupted experiment.
std::vector<RunRecord> run_experiment(const ExperimentConfig& c, const std::vector<std::string>& variants, int seeds,
                                      int threads, const std::filesystem::path& out_dir,
                                      const ExperimentProgress& progress = {}, bool resume = false);

// Column names and rows of results.csv (byte-stable: no timings).
std::string results_csv(const std::vector<RunRecord>& runs);

}  // namespace p0sim::study
