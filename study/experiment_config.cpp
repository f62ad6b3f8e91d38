#include "study/experiment_config.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include "common/errors.hpp"
#include "study/config_toml.hpp"

namespace p0sim::study {
namespace fs = std::filesystem;
using sim::TrainConfig;

namespace {

// Experiment keys are run options within every run's scope (not `train`-only ones).
const RunOption* experiment_key(const std::string& key) {
  const RunOption* o = find_run_option(key);
  return o != nullptr && (o->scope & kEveryRun) ? o : nullptr;
}

std::string unknown_key(const TomlEntry& e, const std::string& section) {
  std::vector<std::string> keys;
  for (const RunOption& o : run_options())
    if (o.scope & kEveryRun) keys.push_back(o.name);
  const std::string near = nearest_option(e.key, keys);
  return e.at + ": unknown key '" + e.key + "'" + (section.empty() ? "" : " in [" + section + "]") +
         (near.empty() ? "" : " (did you mean '" + near + "'?)");
}

// [experiment] seeds: an integer in 2..10000 (intervals and tests need two seeds).
int parse_seed_count(const TomlEntry& e, const std::string& option) {
  int n = 0;
  const char* end = e.text.data() + e.text.size();
  const auto [ptr, ec] = std::from_chars(e.text.data(), end, n);
  if (e.is_array || ec != std::errc() || ptr != end || n < 2 || n > 10000)
    throw UsageError(option, e.at + ": [experiment] seeds must be an integer in 2..10000, got '" + e.text + "'");
  return n;
}

}  // namespace

ExperimentConfig parse_experiment_config(const std::string& text, const std::string& where, const std::string& option) {
  const TomlDocument doc = parse_toml(text, where, option);
  ExperimentConfig c;
  for (const TomlEntry& e : doc.root) {
    if (experiment_key(e.key) == nullptr) throw UsageError(option, unknown_key(e, ""));
    if (e.is_array) throw UsageError(option, e.where + ": expected a single value, not an array");
    c.base.set(e.key, e.text, option + ": " + e.where);
  }
  for (const TomlSection& s : doc.sections) {
    const std::string at = where + ":" + std::to_string(s.line);
    if (s.name == "experiment") {
      for (const TomlEntry& e : s.entries) {
        if (e.key == "seeds") {
          c.seeds = parse_seed_count(e, option);
          continue;
        }
        if (e.key != "main" && e.key != "control")
          throw UsageError(option,
                           e.at + ": unknown key '" + e.key + "' in [experiment] (expected main, control, seeds)");
        (e.key == "main" ? c.main : c.control) = e.text;
      }
      continue;
    }
    if (s.name.rfind("variants.", 0) != 0 || s.name.size() == 9)
      throw UsageError(option, at + ": unknown section '[" + s.name + "]' (expected [experiment] or [variants.NAME])");
    ExperimentVariant v{s.name.substr(9), {}};
    for (const TomlEntry& e : s.entries) {
      if (experiment_key(e.key) == nullptr) throw UsageError(option, unknown_key(e, s.name));
      if (e.key == "seed")
        throw UsageError(option, e.where + ": 'seed' is the experiment's base seed; set it at the top level");
      if (e.is_array) throw UsageError(option, e.where + ": expected a single value, not an array");
      OptionValues check;
      check.set(e.key, e.text, option + ": " + e.where);
      v.overrides.emplace_back(e.key, e.text);
    }
    c.variants.push_back(std::move(v));
  }
  auto has = [&](const std::string& n) {
    return std::any_of(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v.name == n; });
  };
  // main = control = "" declares a search: every variant is a cell, no claim is tested.
  const bool search = c.main.empty() && c.control.empty();
  if (!search) {
    if (!has(c.main)) throw UsageError(option, where + ": no [variants." + c.main + "] (the main variant)");
    if (!has(c.control)) throw UsageError(option, where + ": no [variants." + c.control + "] (the control variant)");
    if (c.main == c.control) throw UsageError(option, where + ": main and control must be different variants");
  }
  for (const auto& v : c.variants) {
    const TrainConfig t = make_train_config(variant_options(c, v), option);
    if (t.probe.every <= 0)
      throw UsageError(option,
                       where + ": variant '" + v.name + "': probe-every must be > 0 (the metrics come from probes)");
  }
  return c;
}

ExperimentConfig read_experiment_config(const fs::path& path, const std::string& option) {
  std::ifstream in(path);
  if (!in) throw UsageError(option, "cannot read '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_experiment_config(text.str(), path.string(), option);
}

OptionValues variant_options(const ExperimentConfig& c, const ExperimentVariant& v) {
  OptionValues o = c.base;
  for (const auto& [k, val] : v.overrides) o.set(k, val, "--config");
  return o;
}

TrainConfig make_train_config(const OptionValues& o, const std::string& option) {
  try {
    return o.spec().train;
  } catch (const UsageError& e) {
    // The train checks name train options (--lr ...); here they come from the config file.
    throw UsageError(option, e.what());
  }
}

std::string train_options_toml(const OptionValues& options) {
  return "# resolved configuration of one experiment run; pass to 'p0sim train --config'\n" + options.toml();
}

std::string experiment_toml(const ExperimentConfig& c) {
  std::string out = "# resolved configuration of 'p0sim experiment'; pass back with --config\n";
  out += c.base.toml();
  out += "\n[experiment]\nmain = \"" + c.main + "\"\ncontrol = \"" + c.control + "\"\n";
  if (c.seeds > 0) out += "seeds = " + std::to_string(c.seeds) + "\n";
  for (const auto& v : c.variants) {
    out += "\n[variants." + v.name + "]\n";
    for (const auto& [k, val] : v.overrides) out += k + " = " + toml_value(*find_run_option(k), val) + "\n";
  }
  return out;
}

}  // namespace p0sim::study
