#pragma once
// Errors the CLI turns into exit codes: UsageError -> 2 (bad input, one line naming the option),
// RunError -> 1 (a run that failed: I/O, divergence). Both carry a one-line message.
#include <stdexcept>
#include <string>

namespace p0sim {

struct UsageError : std::runtime_error {
  UsageError(const std::string& option, const std::string& what) : std::runtime_error(option + ": " + what) {}
};

// A configuration the engine refuses, naming the configuration field (the key of the config's JSON
// record, e.g. "d_model") rather than an option: the engine knows no CLI names. Whoever built the
// configuration names the option the user set it with (study::option_for_field).
struct ConfigError : UsageError {
  ConfigError(const std::string& field, const std::string& what)
      : UsageError(field, what), field(field), message(what) {}
  std::string field, message;
};

struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace p0sim
