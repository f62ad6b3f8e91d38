#pragma once
// The options of one training run, each declared once (run_options.cpp): name, type, default,
// accepted range or names, unit and help. Everything that names a run option derives from that
// table: the CLI flags of `train` and `sweep`, the keys of --config files and experiment TOMLs,
// experiment variant overrides, sweep grid keys, the resolved config.toml written next to every
// result, and the fingerprint that ties a checkpoint to its run.
//
// A run is described by OptionValues: the text of every option, as the user wrote it (so a
// resolved config reads back exactly as given), checked against the table when set.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.hpp"
#include "common/errors.hpp"
#include "sim/checkpoint.hpp"
#include "sim/train.hpp"

namespace p0sim::study {

enum class OptionType { integer, real, unsigned64, flag, name, path };

// `p0sim train --warm-start`: the random init, or the hand-wired circuit plus noise.
enum class WarmStart { none, circuit, count };

constexpr std::array<std::string_view, 2> enum_names_of(WarmStart) { return {"none", "circuit"}; }

// Where an option is accepted.
enum Scope : unsigned {
  kTrainOnly = 1,  // `p0sim train` only (not an experiment key or a sweep grid key)
  kEveryRun = 2,   // train, sweep (base and grid key) and experiment (base and variant override)
};

struct RunOption {
  std::string name;  // "d-model": flag --d-model, config / grid / variant key d-model
  OptionType type = OptionType::integer;
  std::string default_text;                 // what an option not given means, as written in resolved configs
  double min = 0, max = 0;                  // accepted closed range (integer, real, unsigned64: digits only)
  bool min_open = false, max_open = false;  // the bound itself is excluded
  std::vector<std::string> names;           // type name: the accepted names (from the enum's name table)
  std::string unit;                         // "steps", "tokens", "" for none
  std::string help;
  unsigned scope = kEveryRun;
  // Changes what a run computes or records while it trains, so a checkpoint written under another
  // value must not be resumed. False for what is applied only at the end (emergence thresholds,
  // ablations) or only steers the orchestration (progress lines, checkpoint interval).
  bool fingerprint = true;

  // "" if `text` is accepted, else what is accepted ("an integer in 1..256, got 'x'").
  std::string check(const std::string& text) const;
  // "an integer in 1..256", "a number in (0, 1)", "one of causal, bidirectional": for help texts.
  std::string accepted() const;
};

// Every run option, in the order resolved configs list them.
const std::vector<RunOption>& run_options();
// The option named `name` (without dashes), or nullptr.
const RunOption* find_run_option(std::string_view name);
// The valid key closest to `name` (edit distance), for "did you mean" messages; "" if none is close.
std::string nearest_option(std::string_view name, const std::vector<std::string>& candidates);

// What the options describe: the engine's configuration and what the orchestration does around it.
struct RunSpec {
  sim::TrainConfig train;
  int checkpoint_every = 0;  // 0 = only where the caller asks for one
  WarmStart warm_start = WarmStart::none;
  double warm_start_noise = 0.01;
};

// The text of every run option; unset ones hold their default.
class OptionValues {
 public:
  OptionValues();
  // Sets `name` to `text` after checking it; a bad name or value is a UsageError naming `where`
  // (an option like "--lr", or "FILE:LINE: key 'lr'").
  void set(const std::string& name, const std::string& text, const std::string& where);
  const std::string& get(const std::string& name) const;
  bool is_default(const std::string& name) const;
  bool operator==(const OptionValues& o) const { return text_ == o.text_; }
  // name = value lines of every option within `scope`, in table order, TOML-quoted where needed.
  std::string toml(unsigned scope = kEveryRun) const;

  // The run these options describe, validated (UsageError naming the option).
  RunSpec spec() const;
  // What a checkpoint must agree on with the run resuming it: the value of every option marked
  // `fingerprint`, as compact JSON with numbers parsed (so "1e-3" and "0.001" agree). The thread
  // count is no option: a run resumes with any --threads.
  std::string checkpoint_fingerprint() const;
  // Whether a checkpoint stored under another fingerprint continues this run: the same options, except
  // that under a constant learning-rate schedule `steps` may differ, since it enters no step's
  // arithmetic there, only where training stops. So a finished run can be extended, and an unfinished
  // one given more or fewer steps (not fewer than its checkpoint's), bit for bit as if it had been
  // given them from the start.
  sim::FingerprintCheck checkpoint_fits() const;

 private:
  std::vector<std::string> text_;  // parallel to run_options()
  std::vector<bool> given_;
};

// Refuses (UsageError on --steps) extending `what`, trained to `from` steps, to `to`: fewer steps, or a
// cosine schedule, whose learning rate at every step depends on --steps (see checkpoint_fits).
void check_steps_extension(const std::string& what, long from, long to, sim::Schedule schedule);

// The option a configuration field is set with ("d_model" -> "--d-model"), for the engine's
// ConfigError messages; a field outside the table (threads) becomes --field-name likewise.
std::string option_for_field(const std::string& field);
// The engine's refusal retold with the option's name: "--d-model: must be ...".
UsageError option_error(const ConfigError& e);

// TOML quoting for a resolved config value: numbers and booleans bare, names quoted.
std::string toml_value(const RunOption& o, const std::string& text);

}  // namespace p0sim::study
