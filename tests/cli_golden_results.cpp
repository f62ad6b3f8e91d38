// The engine's results pinned byte for byte: a short experiment (every variant kind of the
// headline) and two short sweeps (training and theory) must write exactly the files under
// tests/golden/. A change to the arithmetic, to the order of operations, to a seed derivation or
// to a results column shows up here. If the change is meant, regenerate the files with the
// commands below and say in the commit which result changed and why. The bits are those of the
// release build (-O3 -march=native, where GCC contracts a*b+c into FMAs); the sanitizer build's -O1
// contracts differently, so it skips these ([golden] is left out of its test list).
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/test_support.hpp"

namespace fs = std::filesystem;

namespace {

const p0sim::test::ScratchRoot scratch("p0sim_cli_golden_");
const fs::path kGolden = fs::path(P0SIM_SOURCE_DIR) / "tests" / "golden";

void run_ok(const std::string& args) {
  const auto r = p0sim::test::run_shell(scratch, std::string(P0SIM_BINARY) + " " + args);
  INFO(args << "\n" << r.err);
  REQUIRE(r.code == 0);
}

void check_same(const fs::path& produced, const std::string& golden) {
  CAPTURE(produced.string(), golden);
  const std::string want = p0sim::test::slurp(kGolden / golden);
  REQUIRE_FALSE(want.empty());
  CHECK(p0sim::test::slurp(produced) == want);
}

}  // namespace

TEST_CASE("a short experiment reproduces its golden results byte for byte", "[golden]") {
  const fs::path out = scratch.root() / "experiment";
  run_ok("experiment --config '" + (kGolden / "experiment.toml").string() + "' --seeds 2 --threads 2 --out '" +
         out.string() + "'");
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
  run_ok(
      "sweep --vocab 16 --heads 2 --batch 8 --steps 12 --probe-every 6 --probe-batch 16 --task firstrecall "
      "--layers 2 --grid d-model=8,16 --grid seq-len=4,8 --grid mask=causal,prefix-bidirectional --seeds 2 "
      "--threads 2 --out '" +
      out.string() + "'");
  check_same(out / "results.csv", "sweep_train.results.csv");
  check_same(out / "sweep.toml", "sweep_train.sweep.toml");
}

TEST_CASE("a short theory sweep reproduces its golden results byte for byte", "[golden]") {
  const fs::path out = scratch.root() / "theory";
  run_ok(
      "sweep --kind theory --grid d=4,16 --grid T=4,8 --grid mask=causal,bidirectional --seeds 2 --trials 300 "
      "--out '" +
      out.string() + "'");
  check_same(out / "results.csv", "sweep_theory.results.csv");
}
