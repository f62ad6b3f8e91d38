// The options every subcommand shares: --config (TOML) and its application, the resolved
// configuration written next to results, and the common option checks. Kept apart from run_main
// so the config fuzz target (tests/fuzz/) links it without the whole CLI.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "cli/commands.hpp"
#include "common/errors.hpp"
#include "study/config_toml.hpp"
#include "study/run_options.hpp"

namespace p0sim::cli {

namespace {

bool is_bare_toml_value(const std::string& v) {
  if (v == "true" || v == "false") return true;
  if (v.empty()) return false;
  char* end = nullptr;
  std::strtod(v.c_str(), &end);
  return end == v.c_str() + v.size();
}

std::string toml_quote(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

}  // namespace

void apply_config_file(CLI::App& sub, const std::string& path, const std::string& option) {
  const study::TomlDocument doc = study::read_toml(path, option);
  if (!doc.sections.empty())
    throw UsageError(option, "'" + path + "':" + std::to_string(doc.sections.front().line) +
                                 ": sections are not accepted ('[" + doc.sections.front().name + "]')");
  for (const study::TomlEntry& item : doc.root) {
    if (item.key == "config" || item.key == "resume")
      throw UsageError(option, "'" + path + "': a config file cannot name another config or a run to resume");
    CLI::Option* opt = sub.get_option_no_throw("--" + item.key);
    if (opt == nullptr || item.key == "help" || opt->get_lnames().empty()) {
      std::vector<std::string> keys;
      for (const CLI::Option* o : sub.get_options())
        if (!o->get_lnames().empty() && o->get_single_name() != "help" && o->get_single_name() != "config")
          keys.push_back(o->get_single_name());
      const std::string near = study::nearest_option(item.key, keys);
      throw UsageError(option, item.at + ": unknown key '" + item.key + "' for '" + sub.get_name() + "'" +
                                   (near.empty() ? "" : " (did you mean '" + near + "'?)"));
    }
    if (opt->count() > 0) continue;  // the command line wins
    // A TOML array for a list option: d = [4, 8] means --d 4,8.
    std::vector<std::string> inputs = {item.text};
    if (item.is_array && opt->get_items_expected_max() > 1) inputs = item.items;
    try {
      for (const auto& v : inputs) opt->add_result(v);
      opt->run_callback();
    } catch (const CLI::ParseError& e) {
      throw UsageError(option, item.where + ": " + e.what());
    }
  }
}

void add_config_option(CLI::App& sub, std::function<void()> run) {
  auto* config = sub.add_option("--config", "Read options from a TOML file (keys are option names without dashes)")
                     ->check(CLI::ExistingFile);
  sub.callback([&sub, config, run = std::move(run)] {
    if (config->count() > 0) apply_config_file(sub, config->as<std::string>(), "--config");
    run();
  });
}

std::string resolved_config(const CLI::App& sub) {
  std::string out = "# resolved configuration of 'p0sim " +
                    (sub.get_parent() && sub.get_parent()->get_parent() ? sub.get_parent()->get_name() + " " : "") +
                    sub.get_name() + "'; pass back with --config\n";
  for (const CLI::Option* opt : sub.get_options()) {
    const std::string& name = opt->get_single_name();
    // --out, --force and --resume say where a run goes, not what it is: a replayed config must not
    // silently overwrite the results it came from, so the user names the output again.
    if (name.empty() || name == "help" || name == "config" || name == "out" || name == "force" || name == "resume" ||
        opt->get_lnames().empty())
      continue;
    std::string value;
    if (opt->count() > 0) {
      for (const auto& v : opt->results()) value += (value.empty() ? "" : ",") + v;
    } else {
      value = opt->get_default_str();
      if (value.empty() && opt->get_expected_max() == 0) value = "false";  // a flag not given
      if (value.empty()) continue;
    }
    out += name + " = " + (is_bare_toml_value(value) ? value : toml_quote(value)) + "\n";
  }
  return out;
}

CLI::Validator finite_number(FiniteBound bound) {
  const char* accepted = bound == FiniteBound::positive      ? "a finite number > 0"
                         : bound == FiniteBound::nonnegative ? "a finite number >= 0"
                                                             : "a finite number";
  return CLI::Validator(
      [bound, accepted](std::string& in) -> std::string {
        double v = 0.0;
        const bool ok = CLI::detail::lexical_cast(in, v) && std::isfinite(v) &&
                        (bound != FiniteBound::positive || v > 0.0) && (bound != FiniteBound::nonnegative || v >= 0.0);
        return ok ? std::string() : std::string("must be ") + accepted + ", got '" + in + "'";
      },
      accepted);
}

CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& in) -> std::string {
        const bool digits = !in.empty() && in.size() <= 20 &&
                            std::all_of(in.begin(), in.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
        std::uint64_t v = 0;
        const bool ok = digits && CLI::detail::lexical_cast(in, v) && (in.size() < 20 || in <= "18446744073709551615");
        return ok ? std::string()
                  : "must be an unsigned integer in 0.." + std::to_string(~std::uint64_t{0}) + ", got '" + in + "'";
      },
      "UINT64");
}

std::filesystem::path config_path_for(const std::filesystem::path& csv) {
  std::filesystem::path cfg = csv;
  if (cfg.extension() == ".csv") return cfg.replace_extension(".config.toml");
  return cfg.string() + ".config.toml";
}

}  // namespace p0sim::cli
