#pragma once
// The run options as CLI11 flags: one flag per entry of the run-option table
// (study/run_options.hpp), with its help, accepted values and default taken from there, for
// `p0sim train` and `p0sim sweep` (whose base point is any run option).
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "study/run_options.hpp"

namespace p0sim::cli {

class RunOptionFlags {
 public:
  // Registers every run option within `scope` (study::Scope bits) on `sub`.
  RunOptionFlags(CLI::App& sub, unsigned scope);
  // The options given (on the command line or by --config) over the defaults; `base` supplies the
  // values of options not given (an experiment's base, for a sweep over one).
  study::OptionValues values(const study::OptionValues& base = {}) const;
  // True when --name was given.
  bool given(const std::string& name) const;

 private:
  struct Flag {
    const study::RunOption* option;
    CLI::Option* cli;
    std::shared_ptr<std::string> text;
    std::shared_ptr<bool> on;  // flags
  };
  std::vector<Flag> flags_;
};

}  // namespace p0sim::cli
