// `p0sim experiment` through the binary: a tiny experiment (2 variants x 2 seeds, a few steps)
// whose results.csv does not depend on --threads, whose verdict.json has the documented
// structure, whose runs replay under `p0sim train`, and one-line exit-2 errors for bad input.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <regex>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "common/rng.hpp"

#include "sim/probe_metrics.hpp"
#include "tests/test_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace cli_experiment_run_test {

namespace fs = std::filesystem;

namespace {

const p0sim::test::ScratchRoot scratch("p0sim_cli_experiment_");
const fs::path& kRoot = scratch.root();
using p0sim::test::Outcome;
using p0sim::test::slurp;

Outcome run_p0sim(const std::string& args) {
  return p0sim::test::run_shell(scratch, std::string(P0SIM_BINARY) + " " + args);
}

// Small enough that prefix-bidirectional (one forward per prefix) runs in well under a second.
const std::string kTinyConfig = R"(vocab = 16
d-model = 16
heads = 2
seq-len = 8
batch = 8
task = "firstrecall"
steps = 20
lr = 3e-3
probe-every = 10
probe-batch = 16
seed = 3

[experiment]
main = "main"
control = "prefix-bidirectional"

[variants.main]

[variants.prefix-bidirectional]
mask = "prefix-bidirectional"

[variants.rope]
pos = "rope"
)";

fs::path write_config(const std::string& name, const std::string& text) {
  fs::create_directories(kRoot);
  const fs::path p = kRoot / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("experiment results.csv is byte-identical for --threads 1 and 2", "[cli][experiment]") {
  const fs::path cfg = write_config("tiny.toml", kTinyConfig);
  const fs::path a = kRoot / "a", b = kRoot / "b";
  const std::string common = "experiment --config " + cfg.string() + " --seeds 2 --variants main,prefix-bidirectional";
  REQUIRE(run_p0sim(common + " --threads 1 --out " + a.string()).code == 0);
  REQUIRE(run_p0sim(common + " --threads 2 --out " + b.string()).code == 0);
  const std::string csv = slurp(a / "results.csv");
  REQUIRE(csv == slurp(b / "results.csv"));
  CHECK(slurp(a / "verdict.json") == slurp(b / "verdict.json"));

  // Header, then (variant order, seed) rows; seeds derived from (base seed, variant, index) so
  // adding a variant never changes another's runs.
  CHECK(csv.rfind("variant,seed_index,seed,engine_version,loss,task_accuracy,first_trigger_accuracy,l1_active_attn_to_"
                  "0,final_loss,",
                  0) == 0);
  CHECK(csv.find("emerged_identification,emerged_high_norm,emerged_sink,emerged_all,high_norm_probes,sink_probes,stage,"
                 "p0_norm_ratio_l0,") != std::string::npos);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
  CHECK(csv.find("\nmain,0," + std::to_string(p0sim::derive_seed(3, "main", 0)) + ",") != std::string::npos);
  CHECK(csv.find("\nmain,1,") < csv.find("\nprefix-bidirectional,0,"));
  CHECK(csv.find("\nprefix-bidirectional,1," + std::to_string(p0sim::derive_seed(3, "prefix-bidirectional", 1)) +
                 ",") != std::string::npos);
  CHECK(csv.find("rope") == std::string::npos);

  // Each run directory holds what `p0sim train` writes, and its config.toml replays the run.
  const fs::path run = a / "runs" / "main" / "seed-1";
  for (const char* f : {"config.toml", "train.csv", "summary.json", "trace.csv", "heads.csv", "weights/config.json"})
    CHECK(fs::exists(run / f));
  const fs::path replay = kRoot / "replay";
  REQUIRE(run_p0sim("train --config " + (run / "config.toml").string() + " --out " + replay.string()).code == 0);
  CHECK(slurp(replay / "trace.csv") == slurp(run / "trace.csv"));
  CHECK(slurp(replay / "weights" / "lm_head.npy") == slurp(run / "weights" / "lm_head.npy"));

  // experiment.toml is accepted back by --config.
  CHECK(run_p0sim("experiment --config " + (a / "experiment.toml").string() + " --seeds 2 --out " +
                  (kRoot / "again").string())
            .code == 0);
  CHECK(slurp(kRoot / "again" / "results.csv") == csv);
}

TEST_CASE("an experiment's seed count comes from its config, is kept by --resume and can only grow",
          "[cli][experiment]") {
  const fs::path cfg = write_config(
      "seeded.toml", std::regex_replace(kTinyConfig, std::regex("\\[experiment\\]\n"), "[experiment]\nseeds = 2\n"));
  const fs::path dir = kRoot / "seeded";
  const std::string variants = " --variants main,prefix-bidirectional";
  REQUIRE(run_p0sim("experiment --config " + cfg.string() + variants + " --out " + dir.string()).code == 0);
  const std::string csv = slurp(dir / "results.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);  // header + 2 variants x 2 seeds
  CHECK(slurp(dir / "experiment.toml").find("\nseeds = 2\n") != std::string::npos);
  // Resuming without --seeds keeps 2 (the command's default of 3 would have added a seed).
  REQUIRE(run_p0sim("experiment --resume --out " + dir.string()).code == 0);
  CHECK(slurp(dir / "results.csv") == csv);
  // --seeds overrides the config's count.
  const fs::path dir3 = kRoot / "seeded3";
  REQUIRE(run_p0sim("experiment --config " + cfg.string() + variants + " --seeds 3 --out " + dir3.string()).code == 0);
  const std::string csv3 = slurp(dir3 / "results.csv");
  CHECK(std::count(csv3.begin(), csv3.end(), '\n') == 7);
  // A larger --seeds on --resume trains only the new seed and ends as the 3-seed experiment.
  const auto seed0_written = fs::last_write_time(dir / "runs" / "main" / "seed-0" / "summary.json");
  const Outcome grown = run_p0sim("experiment --resume --seeds 3 --threads 1 --out " + dir.string());
  REQUIRE(grown.code == 0);
  CHECK(slurp(dir / "results.csv") == csv3);
  CHECK(slurp(dir / "verdict.json") == slurp(dir3 / "verdict.json"));
  CHECK(slurp(dir / "experiment.toml") == slurp(dir3 / "experiment.toml"));
  CHECK(fs::last_write_time(dir / "runs" / "main" / "seed-0" / "summary.json") == seed0_written);
  // Seed-major order: with one thread the new seed of each variant, in the file's variant order.
  CHECK(grown.err.find("main seed-2 done") < grown.err.find("prefix-bidirectional seed-2 done"));
  CHECK_THAT(grown.err, Catch::Matchers::Contains("[start] main seed-2 started (") &&
                            !Catch::Matchers::Contains("seed-0 started") &&
                            !Catch::Matchers::Contains("seed-1 started"));
  // Fewer seeds would drop finished runs: refused, nothing rewritten.
  const Outcome fewer = run_p0sim("experiment --resume --seeds 2 --out " + dir.string());
  CHECK(fewer.code == 2);
  CHECK_THAT(fewer.err, Catch::Matchers::Contains("--seeds") && Catch::Matchers::Contains("3-seed experiment"));
  CHECK(std::count(fewer.err.begin(), fewer.err.end(), '\n') == 1);
  CHECK(slurp(dir / "results.csv") == csv3);
}

TEST_CASE("an experiment trains seed-major: every variant's seed i before any seed i + 1", "[cli][experiment]") {
  const fs::path cfg = write_config("order.toml", kTinyConfig);
  const Outcome o =
      run_p0sim("experiment --config " + cfg.string() + " --seeds 2 --threads 1 --out " + (kRoot / "order").string());
  REQUIRE(o.code == 0);
  std::vector<std::string> done;
  const std::regex line(R"(\] (\S+ seed-\d) done)");
  for (std::sregex_iterator it(o.err.begin(), o.err.end(), line), end; it != end; ++it) done.push_back((*it)[1]);
  const std::vector<std::string> expected = {"main seed-0", "prefix-bidirectional seed-0", "rope seed-0",
                                             "main seed-1", "prefix-bidirectional seed-1", "rope seed-1"};
  CHECK(done == expected);
}

TEST_CASE("experiment verdict.json names each claim with its test, p-value and per-variant intervals",
          "[cli][experiment]") {
  const fs::path cfg = write_config("tiny_v.toml", kTinyConfig);
  const fs::path out = kRoot / "v";
  REQUIRE(run_p0sim("experiment --config " + cfg.string() + " --seeds 2 --threads 2 --out " + out.string()).code == 0);
  const auto v = nlohmann::json::parse(slurp(out / "verdict.json"));
  CHECK(v["seeds"] == 2);
  CHECK(v["main"] == "main");
  CHECK(v["control"] == "prefix-bidirectional");
  CHECK(v["variant_order"] == nlohmann::json({"main", "prefix-bidirectional", "rope"}));
  REQUIRE(v["claims"].size() == 3);
  const char* names[] = {"identification", "high_norm", "sink"};
  for (int i = 0; i < 3; ++i) {
    const auto& c = v["claims"][i];
    CAPTURE(i);
    CHECK(c["claim"] == names[i]);
    CHECK(c["test"] == "welch-t two-sided");
    CHECK(c["p_value"].is_number());
    CHECK(c["p_value"].get<double>() >= 0.0);
    CHECK(c["p_value"].get<double>() <= 1.0);
    CHECK(c["holds_for_main"].is_boolean());
    CHECK(c["fails_for_control"].is_boolean());
    CHECK(c["main"]["runs"] == 2);
    CHECK(c["control"]["runs"] == 2);
    // Consistency of the rule: supported implies both sides of the comparison.
    if (c["supported"].get<bool>()) CHECK((c["holds_for_main"].get<bool>() && c["fails_for_control"].get<bool>()));
  }
  for (const char* variant : {"main", "prefix-bidirectional", "rope"}) {
    const auto& t = v["variants"][variant];
    CAPTURE(variant);
    CHECK(t["runs"] == 2);
    // runs where a claim held at some probe include those where it held to the end
    CHECK(t["ever"]["high_norm"].get<int>() >= t["emerged"]["high_norm"].get<int>());
    CHECK(t["ever"]["sink"].get<int>() >= t["emerged"]["sink"].get<int>());
    const auto per_layer = std::count_if(p0sim::sim::layer_metrics().begin(), p0sim::sim::layer_metrics().end(),
                                         [](const p0sim::sim::LayerMetric& m) { return m.in_results; });
    REQUIRE(t["metrics"].size() == static_cast<std::size_t>(6 + per_layer * 2));  // 6 scalars + per layer x 2 layers
    const auto& loss = t["metrics"][0];
    CHECK(loss["metric"] == "loss");
    CHECK(loss["n"] == 2);
    CHECK(loss["lo"].get<double>() <= loss["mean"].get<double>());
    CHECK(loss["mean"].get<double>() <= loss["hi"].get<double>());
  }
  CHECK(fs::exists(out / "experiment.toml"));
  CHECK(fs::exists(out / "runs" / "rope" / "seed-1" / "summary.json"));
}

TEST_CASE("experiment rejects bad input with one line naming the option and exit 2", "[cli][experiment]") {
  const fs::path cfg = write_config("tiny_e.toml", kTinyConfig);
  const fs::path bad = write_config("bad.toml", kTinyConfig + "[variants.x]\nlearning-rate = 0.1\n");
  const std::string out = " --out " + (kRoot / "e").string();
  struct Case {
    std::string args, option;
  };
  const Case cases[] = {
      {"experiment --config " + bad.string() + out, "--config"},
      {"experiment --seeds 2" + out, "--config"},
      {"experiment --config " + cfg.string() + " --seeds 2", "--out"},
      {"experiment --config " + cfg.string() + " --seeds 1" + out, "--seeds"},
      {"experiment --config " + cfg.string() + " --threads 0" + out, "--threads"},
      {"experiment --config " + cfg.string() + " --variants main,nope" + out, "--variants"},
      {"experiment --config " + cfg.string() + " --variants main,rope" + out, "--variants"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const Outcome o = run_p0sim(c.args);
    CHECK(o.code == 2);
    CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
    CHECK(o.err.find(c.option) != std::string::npos);
  }
  CHECK(run_p0sim("experiment --config " + bad.string() + out).err.find("learning-rate") != std::string::npos);
  CHECK_FALSE(fs::exists(kRoot / "e" / "results.csv"));
}

}  // namespace cli_experiment_run_test
