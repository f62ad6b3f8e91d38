#pragma once
// What each fuzz target does with one input, shared by the libFuzzer entry points (fuzz_npy.cpp,
// fuzz_config.cpp) and the corpus regression test (tests/cli_fuzz_corpus.cpp), which replays
// every file of tests/fuzz_corpus/ through the g++ build (and under the sanitize preset).
// Bad input must end in p0sim::UsageError (or CLI::ParseError for CLI11's own checks); any other
// outcome (a crash, a sanitizer report, another exception, an inconsistent array) is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "common/errors.hpp"
#include "study/experiment.hpp"
#include "sim/npy.hpp"

namespace p0sim::fuzz {

// The NPY reader on arbitrary bytes; returns true if they were accepted.
inline bool npy_one_input(const std::string& bytes) {
  try {
    const sim::NpyArray a = sim::parse_npy(bytes, "fuzz.npy");
    const std::size_t item = (a.dtype == "<f8" || a.dtype == "<i8") ? 8 : 4;
    if (a.bytes.size() != static_cast<std::size_t>(a.size()) * item) std::abort();
    // The conversions the CLI applies to accepted arrays (eval's tokens, load_weights' tensors).
    if (a.dtype[1] == 'f')
      (void)a.as_float();
    else
      (void)a.as_int64();
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

// --config FILE applied by the CLI's own apply_config_file (toml++, then our key and
// value checks) to a subcommand with one option of each kind p0sim uses.
inline bool config_file_one_input(const std::string& path) {
  CLI::App app{"fuzz"};
  app.option_defaults()->always_capture_default();
  auto* sub = app.add_subcommand("sub", "");
  int steps = 1;
  double lr = 1e-3, prob = 0.5;
  std::string task = "markov", list = "4", out;
  bool flag = false;
  std::uint64_t seed = 1;
  std::vector<int> ints;
  sub->add_option("--steps", steps, "")->check(CLI::Range(0, 1000000000));
  sub->add_option("--lr", lr, "")->check(cli::finite_number(cli::FiniteBound::positive));
  sub->add_option("--trigger-prob", prob, "")->check(CLI::Range(1e-9, 1.0 - 1e-9));
  sub->add_option("--task", task, "")->check(CLI::IsMember({"uniform", "markov", "firstrecall"}));
  sub->add_option("--d", list, "");
  sub->add_option("--ints", ints, "");
  sub->add_flag("--bos", flag, "");
  sub->add_option("--seed", seed, "")->check(cli::unsigned_integer());
  sub->add_option("--out", out, "");
  cli::add_config_option(*sub, [sub] { (void)cli::resolved_config(*sub); });
  std::string a0 = "fuzz", a1 = "sub", a2 = "--config", a3 = path;
  char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data()};
  try {
    app.parse(4, argv);
    return true;
  } catch (const CLI::ParseError&) {
  } catch (const UsageError&) {
  }
  return false;
}

// The experiment TOML reader (study/experiment.cpp) on the same text.
inline bool experiment_one_input(const std::string& text) {
  try {
    (void)study::parse_experiment_config(text, "fuzz.toml", "--config");
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

// Both config readers on arbitrary bytes (written to `scratch` for the file-based one).
inline void config_one_input(const std::string& text, const std::string& scratch) {
  std::ofstream(scratch, std::ios::binary | std::ios::trunc) << text;
  (void)config_file_one_input(scratch);
  (void)experiment_one_input(text);
}

}  // namespace p0sim::fuzz
