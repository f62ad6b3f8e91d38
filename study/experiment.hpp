#pragma once
// `p0sim experiment` without the CLI: the experiment TOML (base run options plus named variants),
// one training run per (variant, seed) on the thread pool, the per-run final metrics, their
// Student-t intervals, and the verdict on the three claims (main variant vs the no-asymmetry
// control, Welch's t-test). The verdict is a pure function of the runs' metrics.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/train.hpp"
#include "study/results.hpp"
#include "study/run_options.hpp"

namespace p0sim::study {

using sim::TrainConfig;
using sim::TrainResult;

// Ordered option name -> text (TOML strings unquoted, numbers and booleans as written).
using KeyValues = std::vector<std::pair<std::string, std::string>>;

struct ExperimentVariant {
  std::string name;
  KeyValues overrides;  // run options that differ from the base
};

struct ExperimentConfig {
  OptionValues base;                       // every run option, defaults filled in (`p0sim train`'s)
  std::string main = "main";               // [experiment] main: the variant the claims are about
  std::string control = "prefix-bidirectional";  // [experiment] control: the no-asymmetry control
  std::vector<ExperimentVariant> variants;  // file order = table and results.csv order
};

// Reads the experiment TOML:
//   top-level keys = `p0sim train` option names without dashes (base of every variant);
//   [experiment] main = "...", control = "..." (optional);
//   [variants.<name>] the overrides of one variant (may be empty).
// Unknown keys or sections, duplicates, arrays, malformed lines, a missing main or control variant:
// UsageError(option, ...) naming the file, line and key. Values are checked by make_train_config.
ExperimentConfig read_experiment_config(const std::filesystem::path& path, const std::string& option);
// Same, from text (`where` names it in errors).
ExperimentConfig parse_experiment_config(const std::string& text, const std::string& where, const std::string& option);

// The resolved run options of a variant (base, then its overrides, in that order).
OptionValues variant_options(const ExperimentConfig& c, const ExperimentVariant& v);
// Options -> TrainConfig, validated; a bad value is a UsageError naming `option` and the key.
TrainConfig make_train_config(const OptionValues& options, const std::string& option);
// TOML that `p0sim train --config` accepts (and reproduces the run with).
std::string train_options_toml(const OptionValues& options);
// TOML that `p0sim experiment --config` accepts back (only the listed variants).
std::string experiment_toml(const ExperimentConfig& c);

struct RunRecord {
  std::string variant;
  int seed_index = 0;
  std::uint64_t seed = 0;  // derive_seed(base seed, variant, seed_index)
  RunMetrics metrics;
};

// Trains every (variant, seed) job on `threads` threads (each run single-threaded) and writes
// out_dir/runs/<variant>/seed-<i>/ with the files `p0sim train` writes. Returns the records in
// (variant order, seed) order whatever the thread count; `on_done` (optional) is called, under a
// lock, as each run finishes. The first failing job (in that order) is rethrown after all stop.
// Each run keeps its final checkpoint (and one every `checkpoint-every` steps). With `resume`,
// a run whose final checkpoint and summary.json exist is not trained again (its metrics come from
// the checkpoint) and a partial run continues from its newest checkpoint, so the results are the
// bytes of an uninterrupted experiment.
std::vector<RunRecord> run_experiment(const ExperimentConfig& c, const std::vector<std::string>& variants, int seeds,
                                      int threads, const std::filesystem::path& out_dir,
                                      const std::function<void(const RunRecord&)>& on_done = {}, bool resume = false);

// Column names and rows of results.csv (byte-stable: no timings).
std::string results_csv(const std::vector<RunRecord>& runs);

// Mean and two-sided `level` Student-t interval of the mean.
struct Interval {
  long n = 0;
  double mean = 0.0, lo = 0.0, hi = 0.0;  // NaN bounds when n < 2
};
Interval mean_interval(const std::vector<double>& x, double level);

// Welch's unequal-variance t-test, two-sided. With both sample variances zero the statistic is
// undefined: p = 1 when the means are equal, else 0 (the samples are separated without overlap),
// and `degenerate` is set.
struct WelchResult {
  double t = 0.0, dof = 0.0, p_value = 1.0;
  bool degenerate = false;
};
WelchResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b);

// The verdict (see experiment.cpp for the exact rules) and the per-variant summary table.
nlohmann::json make_verdict(const ExperimentConfig& c, const std::vector<std::string>& variants, int seeds,
                            const std::vector<RunRecord>& runs);
std::string verdict_table(const nlohmann::json& verdict);

}  // namespace p0sim::study
