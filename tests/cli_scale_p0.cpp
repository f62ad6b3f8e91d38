// `p0sim scale-p0` through the binary, on a small trained firstrecall run: at factor 1 it gives the
// run's last probe loss and layer-1 attention metrics (the same probe rows; the command runs in
// double, the probe in float, so they agree to float rounding, not bit for bit); its attention
// columns are fractions; its slope agrees with the secant through the neighbouring factors' losses;
// its resolved config replays it.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace cli_scale_p0_test {

namespace fs = std::filesystem;

namespace {

const p0sim::test::ScratchRoot kScratch("p0sim_cli_scale_p0_");

p0sim::test::Outcome run_p0sim(const std::string& args) {
  return p0sim::test::run_shell(kScratch, std::string(P0SIM_BINARY) + " " + args);
}

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int column(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    FAIL("no column " << name);
    return -1;
  }
  double number(std::size_t row, const std::string& name) const {
    return std::stod(rows.at(row).at(static_cast<std::size_t>(column(name))));
  }
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

Csv read_csv(const fs::path& p) {
  std::ifstream in(p);
  Csv csv;
  std::string line;
  std::getline(in, line);
  csv.header = split(line);
  while (std::getline(in, line)) csv.rows.push_back(split(line));
  return csv;
}

// A small firstrecall run that has learnt something (about 1 s).
const fs::path& trained_run() {
  static const fs::path run = [] {
    const fs::path dir = kScratch.root() / "run";
    fs::remove_all(dir);
    const auto o = run_p0sim(
        "train --task firstrecall --vocab 16 --d-model 16 --heads 2 --d-ff 32 --seq-len 8 --batch 16 --steps 150 "
        "--lr 1e-2 --triggers 2 --trigger-prob 0.2 --probe-every 50 --probe-batch 24 --seed 2 --out " +
        dir.string());
    REQUIRE(o.code == 0);
    return dir;
  }();
  return run;
}

}  // namespace

TEST_CASE(
    "scale-p0 at factor 1 gives the run's last probe loss, fractions for attention, and slopes that match the "
    "neighbouring losses",
    "[cli][p0scale]") {
  const fs::path run = trained_run(), out = kScratch.root() / "scale.csv";
  fs::remove(out);
  fs::remove(kScratch.root() / "scale.config.toml");
  const auto o = run_p0sim("scale-p0 " + run.string() + " --factors 0.64,0.8,1,1.25,1.5625 --out " + out.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  const Csv csv = read_csv(out);
  // Two blocks: by default only block 0 is scaled, and block 1's attention is measured.
  const std::vector<std::string> header = {"layer",        "factor",       "loss",    "dloss_dlogfactor",
                                           "attn_to_0_l1", "sink_rate_l1", "accuracy"};
  REQUIRE(csv.header == header);
  REQUIRE(csv.rows.size() == 5);
  for (const auto& r : csv.rows) REQUIRE(r.size() == header.size());

  // The run's last probe: the same rows (data stream 1, probe-batch of them), in float.
  const Csv trace = read_csv(run / "trace.csv");
  const double probe_loss = trace.number(trace.rows.size() - 1, "loss");
  CHECK(csv.rows[2][1] == "1");
  CHECK_THAT(csv.number(2, "loss"), Catch::Matchers::WithinRel(probe_loss, 1e-6));
  CHECK_THAT(csv.number(2, "accuracy"),
             Catch::Matchers::WithinAbs(trace.number(trace.rows.size() - 1, "accuracy"), 1e-12));
  // Block 1's attention columns are trace.csv's attn_to_0 and sink_rate of layer 1 (its last row).
  REQUIRE(trace.number(trace.rows.size() - 1, "layer") == 1);
  CHECK_THAT(csv.number(2, "attn_to_0_l1"),
             Catch::Matchers::WithinAbs(trace.number(trace.rows.size() - 1, "attn_to_0"), 1e-6));
  CHECK(csv.number(2, "sink_rate_l1") == trace.number(trace.rows.size() - 1, "sink_rate"));

  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    CAPTURE(i);
    CHECK(csv.number(i, "layer") == 0);
    for (const char* fraction : {"attn_to_0_l1", "sink_rate_l1", "accuracy"}) {
      CAPTURE(fraction);
      CHECK(csv.number(i, fraction) >= 0.0);
      CHECK(csv.number(i, fraction) <= 1.0);
    }
  }
  // The slope at each inner factor against the secant through its neighbours, whose factors are
  // e^(+-0.223) times it: the same sign, and within 10% (the secant's own error is O(0.223^2)).
  for (std::size_t i = 1; i + 1 < csv.rows.size(); ++i) {
    const double slope = csv.number(i, "dloss_dlogfactor");
    const double secant = (csv.number(i + 1, "loss") - csv.number(i - 1, "loss")) /
                          (std::log(csv.number(i + 1, "factor")) - std::log(csv.number(i - 1, "factor")));
    CAPTURE(i, slope, secant);
    CHECK(std::fabs(secant) > 1e-4);  // the comparison has something to compare
    CHECK((slope > 0) == (secant > 0));
    CHECK_THAT(slope, Catch::Matchers::WithinAbs(secant, 0.1 * std::fabs(secant)));
  }
}

TEST_CASE("scale-p0's resolved config replays it byte for byte, and --force alone overwrites", "[cli][p0scale]") {
  const fs::path run = trained_run(), a = kScratch.root() / "a.csv", b = kScratch.root() / "b.csv";
  for (const fs::path& p : {a, b, kScratch.root() / "a.config.toml", kScratch.root() / "b.config.toml"}) fs::remove(p);
  REQUIRE(run_p0sim("scale-p0 " + run.string() + " --factors 0.5:2:x2 --rows 8 --out " + a.string()).code == 0);
  const std::string config = p0sim::test::slurp(kScratch.root() / "a.config.toml");
  CHECK(config.find("rows = 8") != std::string::npos);
  CHECK(config.find("layers = 0") != std::string::npos);  // the default, resolved for this two-block run
  REQUIRE(run_p0sim("scale-p0 " + run.string() + " --config " + (kScratch.root() / "a.config.toml").string() +
                    " --out " + b.string())
              .code == 0);
  CHECK(p0sim::test::slurp(a) == p0sim::test::slurp(b));
  CHECK(read_csv(a).rows.size() == 3);
  const std::string before = p0sim::test::slurp(b);
  const auto refused = run_p0sim("scale-p0 " + run.string() + " --factors 3 --out " + b.string());
  CHECK(refused.code == 2);
  CHECK(refused.err.find("--out") != std::string::npos);
  CHECK(p0sim::test::slurp(b) == before);
  CHECK(run_p0sim("scale-p0 " + run.string() + " --factors 3 --force --out " + b.string()).code == 0);
  CHECK(read_csv(b).rows.size() == 1);
}

}  // namespace cli_scale_p0_test
