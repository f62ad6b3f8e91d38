#pragma once
// The experiment TOML: base run options plus named variants, and the main variant and control the
// claims compare. Read with toml++ and checked against the run-option table.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sim/train.hpp"
#include "study/run_options.hpp"

namespace p0sim::study {

// Ordered option name -> text (TOML strings unquoted, numbers and booleans as written).
using KeyValues = std::vector<std::pair<std::string, std::string>>;

struct ExperimentVariant {
  std::string name;
  KeyValues overrides;  // run options that differ from the base
};

struct ExperimentConfig {
  OptionValues base;                             // every run option, defaults filled in (`p0sim train`'s)
  std::string main = "main";                     // [experiment] main: the variant the claims are about
  std::string control = "prefix-bidirectional";  // [experiment] control: the no-asymmetry control
  std::vector<ExperimentVariant> variants;       // file order = table and results.csv order
  int seeds = 0;  // [experiment] seeds: seeds per variant (2..10000); 0 = not given (the command's default)
};

// Reads the experiment TOML:
//   top-level keys = `p0sim train` option names without dashes (base of every variant);
//   [experiment] main = "...", control = "...", seeds = N (optional);
//   [variants.<name>] the overrides of one variant (may be empty).
// Unknown keys or sections, duplicates, arrays, malformed lines, a missing main or control variant:
// UsageError(option, ...) naming the file, line and key. Values are checked by make_train_config.
ExperimentConfig read_experiment_config(const std::filesystem::path& path, const std::string& option);
// Same, from text (`where` names it in errors).
ExperimentConfig parse_experiment_config(const std::string& text, const std::string& where, const std::string& option);

// The resolved run options of a variant (base, then its overrides, in that order).
OptionValues variant_options(const ExperimentConfig& c, const ExperimentVariant& v);
// Options -> TrainConfig, validated; a bad value is a UsageError naming `option` and the key.
sim::TrainConfig make_train_config(const OptionValues& options, const std::string& option);
// TOML that `p0sim train --config` accepts (and reproduces the run with).
std::string train_options_toml(const OptionValues& options);
// TOML that `p0sim experiment --config` accepts back (only the listed variants).
std::string experiment_toml(const ExperimentConfig& c);

}  // namespace p0sim::study
