// The engine version's results pinned byte for byte: a short train, a short experiment (every
// variant kind of the headline) and two short sweeps (training and theory) must write exactly the
// files under tests/golden/engine-<N>/, N = kEngineVersion. Changing the arithmetic (the order of
// operations, a seed derivation, an RNG stream) without bumping the engine version fails here, and
// so does bumping it without recording its golden files (tests/golden/record.sh). The runs are
// those of tests/golden/commands.txt, the files each writes those of golden_files in golden.sh.
//
// The promise covers any x86-64 CPU with AVX2 and FMA for a build with the compiler, arithmetic
// flags and Eigen of arithmetic.txt (scripts/cross-cpu-check.sh runs these commands under
// emulated Intel and AMD CPUs); the first test checks the build's lines against it.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/engine_version.hpp"
#include "tests/test_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace cli_golden_results_test {

namespace fs = std::filesystem;

namespace {

const p0sim::test::ScratchRoot scratch("p0sim_cli_golden_");
const fs::path kGolden =
    fs::path(P0SIM_SOURCE_DIR) / "tests" / "golden" / ("engine-" + std::to_string(p0sim::kEngineVersion));

void run_ok(const std::string& args) {
  const auto r = p0sim::test::run_shell(scratch, std::string(P0SIM_BINARY) + " " + args);
  INFO(args << "\n" << r.err);
  REQUIRE(r.code == 0);
}

std::string golden(const std::string& name) {
  INFO("golden file " << (kGolden / name).string());
  REQUIRE(fs::is_regular_file(kGolden / name));
  return p0sim::test::slurp(kGolden / name);
}

void check_same(const fs::path& produced, const std::string& name) {
  CAPTURE(produced.string(), name);
  CHECK(p0sim::test::slurp(produced) == golden(name));
}

// A CSV without its last column (train.csv's wall-clock tokens_per_s).
std::string without_last_column(const std::string& csv) {
  std::istringstream in(csv);
  std::string out;
  for (std::string line; std::getline(in, line);) out += line.substr(0, line.rfind(',')) + "\n";
  return out;
}

// The arguments of golden run `name` (commands.txt), {golden} filled in.
std::string golden_args(const std::string& name) {
  std::istringstream in(p0sim::test::slurp(kGolden.parent_path() / "commands.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + ": ", 0) != 0) continue;
    std::string args = line.substr(name.size() + 2);
    for (std::size_t at; (at = args.find("{golden}")) != std::string::npos;)
      args.replace(at, 8, "'" + kGolden.parent_path().string() + "'");
    return args;
  }
  FAIL("tests/golden/commands.txt has no run '" << name << "'");
  return "";
}

// The output of a shell function of tests/golden/golden.sh (stderr is where run_shell keeps text).
std::string golden_sh(const std::string& call) {
  const fs::path helpers = kGolden.parent_path() / "golden.sh";
  const auto r = p0sim::test::run_shell(scratch, "bash -c '. \"" + helpers.string() + "\" && " + call + " >&2'");
  INFO(call << "\n" << r.err);
  REQUIRE(r.code == 0);
  return r.err;
}

// Every file golden run `name` wrote to `out` that golden.sh's golden_files compares byte for
// byte; returns how many.
int check_golden_files(const std::string& name, const fs::path& out) {
  std::istringstream pairs(golden_sh("golden_files " + name + " \"" + out.string() + "\""));
  int n = 0;
  for (std::string produced, golden_name; pairs >> produced >> golden_name; ++n) check_same(produced, golden_name);
  return n;
}

// summary.json without its wall-clock fields.
nlohmann::json without_wall_clock(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  j.erase("tokens_per_s");
  j.erase("wall_seconds");
  return j;
}

}  // namespace

// Tagged [recorded_build]: the promise covers builds whose arithmetic lines equal arithmetic.txt
// (g++), and the sanitize preset's build is clang's, so it skips this test only; its byte-for-byte
// tests below run there too.
TEST_CASE("this engine version has golden files, and this build has their compiler, arithmetic flags and Eigen",
          "[golden][recorded_build]") {
  INFO("engine version " << p0sim::kEngineVersion << " has no golden files in " << kGolden.string()
                         << ": record them with tests/golden/record.sh");
  REQUIRE(fs::is_directory(kGolden));
  const fs::path version = scratch.file("version.txt");
  REQUIRE(std::system((std::string(P0SIM_BINARY) + " --version > '" + version.string() + "'").c_str()) == 0);
  const std::string build = golden_sh("golden_arithmetic < \"" + version.string() + "\"");
  INFO("the golden files were recorded by a build with\n"
       << golden("arithmetic.txt") << "this build has\n"
       << build << "engine version " << p0sim::kEngineVersion << " promises its bits for the recorded lines only");
  CHECK(build == golden("arithmetic.txt"));
}

TEST_CASE("a short train reproduces its golden results byte for byte", "[golden]") {
  const fs::path out = scratch.root() / "train";
  run_ok(golden_args("train") + " --out '" + out.string() + "'");
  CHECK(check_golden_files("train", out) == 21);  // trace, heads and every tensor of a 2-layer model
  CHECK(without_last_column(p0sim::test::slurp(out / "train.csv")) == without_last_column(golden("train.train.csv")));
  const nlohmann::json summary = without_wall_clock(p0sim::test::slurp(out / "summary.json"));
  CHECK(summary == without_wall_clock(golden("train.summary.json")));
  CHECK(summary.at("engine_version") == p0sim::kEngineVersion);
}

TEST_CASE("a short experiment reproduces its golden results byte for byte", "[golden]") {
  const fs::path out = scratch.root() / "experiment";
  run_ok(golden_args("experiment") + " --out '" + out.string() + "'");
  CHECK(check_golden_files("experiment", out) == 7);
}

TEST_CASE("a short training sweep reproduces its golden results byte for byte", "[golden]") {
  const fs::path out = scratch.root() / "sweep";
  run_ok(golden_args("sweep_train") + " --out '" + out.string() + "'");
  CHECK(check_golden_files("sweep_train", out) == 2);
}

TEST_CASE("a short theory sweep reproduces its golden results byte for byte", "[golden]") {
  const fs::path out = scratch.root() / "theory";
  run_ok(golden_args("sweep_theory") + " --out '" + out.string() + "'");
  CHECK(check_golden_files("sweep_theory", out) == 1);
}

}  // namespace cli_golden_results_test
