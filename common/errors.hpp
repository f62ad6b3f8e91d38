#pragma once
// Errors the CLI turns into exit codes: UsageError -> 2 (bad input, one line naming the option),
// RunError -> 1 (a run that failed: I/O, divergence). Both carry a one-line message.
#include <stdexcept>
#include <string>

namespace p0sim {

struct UsageError : std::runtime_error {
  UsageError(const std::string& option, const std::string& what) : std::runtime_error(option + ": " + what) {}
};

struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace p0sim
