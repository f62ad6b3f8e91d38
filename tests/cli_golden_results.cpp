// The engine version's results pinned byte for byte: a short train, a short experiment (every
// variant kind of the headline) and two short sweeps (training and theory) must write exactly the
// files under tests/golden/engine-<N>/, N = kEngineVersion. Changing the arithmetic (the order of
// operations, a seed derivation, an RNG stream) without bumping the engine version fails here, and
// so does bumping it without recording its golden files (tests/golden/record.sh). The runs are
// those of tests/golden/commands.txt.
//
// The promise covers the CPU model the files were recorded on: the release build compiles for the
// machine it runs on, and Eigen's packet width and GCC's instruction choices (FMA contraction
// included) follow the CPU. The SIMD sets (simd.txt) are checked: necessary, not sufficient. The
// sanitizer build's -O1 contracts differently, so it skips these ([golden] is left out of its
// test list).
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/engine_version.hpp"
#include "tests/test_support.hpp"

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

// What `p0sim --version` prints (run_shell keeps stderr only).
std::string version_text() {
  const auto r = p0sim::test::run_shell(scratch, "sh -c '" + std::string(P0SIM_BINARY) + " --version >&2'");
  REQUIRE(r.code == 0);
  return r.err;
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

// summary.json without its wall-clock fields.
nlohmann::json without_wall_clock(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  j.erase("tokens_per_s");
  j.erase("wall_seconds");
  return j;
}

}  // namespace

TEST_CASE("this engine version has golden files, recorded on this build's instruction sets", "[golden]") {
  INFO("engine version " << p0sim::kEngineVersion << " has no golden files in " << kGolden.string()
                         << ": record them with tests/golden/record.sh");
  REQUIRE(fs::is_directory(kGolden));
  const std::string version = version_text();
  const auto at = version.find("SIMD: ");
  REQUIRE(at != std::string::npos);
  const std::string simd = version.substr(at + 6, version.find('\n', at) - at - 6) + "\n";
  INFO("the golden files were recorded with SIMD " << golden("simd.txt") << "this build uses " << simd
                                                   << "engine version " << p0sim::kEngineVersion
                                                   << " promises the same bits only on the same instruction sets");
  CHECK(simd == golden("simd.txt"));
}

TEST_CASE("a short train reproduces its golden results byte for byte", "[golden]") {
  const fs::path out = scratch.root() / "train";
  run_ok(golden_args("train") + " --out '" + out.string() + "'");
  check_same(out / "trace.csv", "train.trace.csv");
  check_same(out / "heads.csv", "train.heads.csv");
  CHECK(without_last_column(p0sim::test::slurp(out / "train.csv")) == without_last_column(golden("train.train.csv")));
  const nlohmann::json summary = without_wall_clock(p0sim::test::slurp(out / "summary.json"));
  CHECK(summary == without_wall_clock(golden("train.summary.json")));
  CHECK(summary.at("engine_version") == p0sim::kEngineVersion);
  int weights = 0;
  for (const auto& e : fs::directory_iterator(out / "weights")) {
    if (e.path().extension() != ".npy") continue;
    check_same(e.path(), "train.weights." + e.path().filename().string());
    ++weights;
  }
  CHECK(weights == 19);  // every tensor of a 2-layer model
}

TEST_CASE("a short experiment reproduces its golden results byte for byte", "[golden]") {
  const fs::path out = scratch.root() / "experiment";
  run_ok(golden_args("experiment") + " --out '" + out.string() + "'");
  check_same(out / "results.csv", "experiment.results.csv");
  check_same(out / "verdict.json", "experiment.verdict.json");
  check_same(out / "ablations.csv", "experiment.ablations.csv");
  check_same(out / "experiment.toml", "experiment.resolved.toml");
  check_same(out / "runs" / "main" / "seed-0" / "trace.csv", "experiment.main-seed-0.trace.csv");
  check_same(out / "runs" / "main" / "seed-0" / "heads.csv", "experiment.main-seed-0.heads.csv");
  check_same(out / "runs" / "main" / "seed-0" / "config.toml", "experiment.main-seed-0.config.toml");
}

TEST_CASE("a short training sweep reproduces its golden results byte for byte", "[golden]") {
  const fs::path out = scratch.root() / "sweep";
  run_ok(golden_args("sweep_train") + " --out '" + out.string() + "'");
  check_same(out / "results.csv", "sweep_train.results.csv");
  check_same(out / "sweep.toml", "sweep_train.sweep.toml");
}

TEST_CASE("a short theory sweep reproduces its golden results byte for byte", "[golden]") {
  const fs::path out = scratch.root() / "theory";
  run_ok(golden_args("sweep_theory") + " --out '" + out.string() + "'");
  check_same(out / "results.csv", "sweep_theory.results.csv");
}
