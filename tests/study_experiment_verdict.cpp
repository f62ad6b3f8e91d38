// The experiment's statistics (Welch's t-test, Student-t half-widths), its TOML parsing and the
// verdict rules, on hand-made inputs with answers derived in closed form.
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <string>

#include "common/errors.hpp"
#include "common/stats.hpp"
#include "study/experiment.hpp"
#include "study/results.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace study_experiment_verdict_test {

using namespace p0sim::study;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using p0sim::sim::Mask;
using p0sim::sim::Task;

TEST_CASE("Welch's t-test matches the closed-form two-dof Student t tail", "[experiment][stats]") {
  // a = {0,2}, b = {3,5}: both variances 2, n = 2, so se^2 = 1 + 1, t = -3/sqrt(2) and the
  // Welch-Satterthwaite dof = (1+1)^2 / (1/1 + 1/1) = 2. For 2 dof, P(|T| > t) = 1 - t/sqrt(t^2+2),
  // here 1 - 3/sqrt(13).
  const WelchResult w = welch_t_test({0.0, 2.0}, {3.0, 5.0});
  CHECK_THAT(w.t, WithinRel(-3.0 / std::sqrt(2.0), 1e-14));
  CHECK_THAT(w.dof, WithinRel(2.0, 1e-14));
  CHECK_THAT(w.p_value, WithinRel(1.0 - 3.0 / std::sqrt(13.0), 1e-12));
  CHECK_FALSE(w.degenerate);
  // Swapping the samples flips t, not p.
  const WelchResult s = welch_t_test({3.0, 5.0}, {0.0, 2.0});
  CHECK_THAT(s.t, WithinRel(3.0 / std::sqrt(2.0), 1e-14));
  CHECK_THAT(s.p_value, WithinRel(w.p_value, 1e-12));
}

TEST_CASE("Welch's dof follows Welch-Satterthwaite for unequal variances and sizes", "[experiment][stats]") {
  // a = {0,2}: var 2, n 2 -> 1; b = {0,4,8}: var 16, n 3 -> 16/3.
  // dof = (19/3)^2 / (1^2/1 + (16/3)^2/2) = 361/137; t = (1 - 4)/sqrt(19/3).
  const WelchResult w = welch_t_test({0.0, 2.0}, {0.0, 4.0, 8.0});
  CHECK_THAT(w.dof, WithinRel(361.0 / 137.0, 1e-13));
  CHECK_THAT(w.t, WithinRel(-3.0 / std::sqrt(19.0 / 3.0), 1e-14));
  CHECK(w.p_value > 0.0);
  CHECK(w.p_value < 1.0);
}

TEST_CASE("Welch's t-test with zero variance is flagged degenerate and decided by the means", "[experiment][stats]") {
  const WelchResult same = welch_t_test({1.0, 1.0, 1.0}, {1.0, 1.0});
  CHECK(same.degenerate);
  CHECK(same.p_value == 1.0);
  const WelchResult apart = welch_t_test({1.0, 1.0}, {0.0, 0.0, 0.0});
  CHECK(apart.degenerate);
  CHECK(apart.p_value == 0.0);
  CHECK_THROWS_AS(welch_t_test({1.0}, {0.0, 1.0}), std::domain_error);
}

TEST_CASE("the 95% Student-t half-width uses the t quantile of n-1 dof", "[experiment][stats]") {
  auto half_width = [](std::initializer_list<double> x) {
    p0sim::RunningStats s;
    for (double v : x) s.add(v);
    return s.ci_half_width(0.95);
  };
  // {0,2}: mean 1, se = 1; t_{0.975,1} = tan(0.475 pi) (Cauchy quantile).
  CHECK_THAT(half_width({0.0, 2.0}), WithinRel(std::tan(0.475 * std::numbers::pi), 1e-10));
  // {0,1,2}: se = 1/sqrt(3); for 2 dof the quantile is (2p-1)/sqrt(2p(1-p)), p = 0.975.
  CHECK_THAT(2.0 * half_width({0.0, 1.0, 2.0}),
             WithinRel(2.0 * 0.95 / std::sqrt(2.0 * 0.975 * 0.025) / std::sqrt(3.0), 1e-10));
  CHECK(std::isnan(half_width({3.0})));
}

namespace {
const std::string kConfig = R"(# base
task = "firstrecall"
seq-len = 8
steps = 5
seed = 7
[experiment]
main = "main"
control = "ctl"
[variants.main]
[variants.ctl]
mask = "prefix-bidirectional"   # the control
[variants.bos]
bos = true
lr = 0.01
)";

std::string message_of(const std::string& text) {
  try {
    parse_experiment_config(text, "x.toml", "--config");
  } catch (const p0sim::UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}
}  // namespace

TEST_CASE("experiment config applies each variant's overrides on top of the base", "[experiment][config]") {
  const ExperimentConfig c = parse_experiment_config(kConfig, "x.toml", "--config");
  REQUIRE(c.variants.size() == 3);
  CHECK(c.variants[0].name == "main");
  CHECK(c.variants[1].name == "ctl");
  CHECK(c.control == "ctl");
  const TrainConfig m = make_train_config(variant_options(c, c.variants[0]), "--config");
  const TrainConfig k = make_train_config(variant_options(c, c.variants[1]), "--config");
  const TrainConfig b = make_train_config(variant_options(c, c.variants[2]), "--config");
  CHECK(m.data.task == Task::firstrecall);
  CHECK(m.model.seq_len == 8);
  CHECK(m.model.mask == Mask::causal);
  CHECK(k.model.mask == Mask::prefix_bidirectional);
  CHECK(k.model.seq_len == 8);
  CHECK(b.model.bos);
  CHECK_THAT(b.lr, WithinRel(0.01, 1e-15));
  CHECK_THAT(m.lr, WithinRel(0.001, 1e-15));  // p0sim train's default
  CHECK(m.seed == 7);
  // The resolved TOML reads back to the same options.
  const ExperimentConfig again = parse_experiment_config(experiment_toml(c), "resolved", "--config");
  for (std::size_t i = 0; i < c.variants.size(); ++i)
    CHECK(variant_options(again, again.variants[i]) == variant_options(c, c.variants[i]));
}

TEST_CASE("experiment config rejects unknown keys, sections and values, naming them", "[experiment][config]") {
  CHECK_THAT(message_of(kConfig + "[variants.extra]\nlearning-rate = 1\n"),
             Catch::Matchers::Contains("--config") && Catch::Matchers::Contains("unknown key 'learning-rate'"));
  CHECK_THAT(message_of("stepz = 3\n" + kConfig), Catch::Matchers::Contains("unknown key 'stepz'"));
  CHECK_THAT(message_of(kConfig + "[sweep]\nx = 1\n"), Catch::Matchers::Contains("unknown section '[sweep]'"));
  CHECK_THAT(message_of(kConfig + "[variants.extra]\nmask = \"sideways\"\n"), Catch::Matchers::Contains("key 'mask'"));
  CHECK_THAT(message_of(kConfig + "[variants.extra]\nseed = 3\n"), Catch::Matchers::Contains("base seed"));
  CHECK_THAT(message_of(kConfig + "[variants.main]\n"), Catch::Matchers::Contains("x.toml:") &&
                                                            Catch::Matchers::Contains("redefine") &&
                                                            Catch::Matchers::Contains("variants.main"));
  CHECK_THAT(message_of("steps = [1, 2]\n" + kConfig), Catch::Matchers::Contains("steps"));
  CHECK_THAT(message_of("[variants.main]\n"), Catch::Matchers::Contains("control"));
  CHECK_THAT(message_of(kConfig + "[variants.extra]\nprobe-every = 0\n"), Catch::Matchers::Contains("probe-every"));
}

namespace {
RunRecord record(const std::string& variant, int i, double attn, bool identified) {
  RunRecord r;
  r.variant = variant;
  r.seed_index = i;
  r.metrics.l1_active_attn_to_0 = attn;
  r.metrics.layers.resize(2);
  for (std::size_t l = 0; l < 2; ++l) {
    p0sim::sim::LayerProbe& lp = r.metrics.layers[l];
    lp.state.p0_norm_ratio = l == 0 ? 1.0 : 1.0 + 0.01 * i;
    lp.state.p0_cos = 0.1;
    lp.sink = {0.0, 0.2, 0.1};  // sink_rate, attn_to_0, attn_to_1
  }
  if (identified) r.metrics.emerged_identification = 100;
  return r;
}
}  // namespace

TEST_CASE("the verdict supports a claim only when main holds, control fails and Welch separates them",
          "[experiment][verdict]") {
  const ExperimentConfig c = parse_experiment_config(kConfig, "x.toml", "--config");
  const std::vector<std::string> names = {"main", "ctl"};
  std::vector<RunRecord> runs = {record("main", 0, 0.95, true), record("main", 1, 0.97, true),
                                 record("main", 2, 0.96, true), record("ctl", 0, 0.10, false),
                                 record("ctl", 1, 0.12, false), record("ctl", 2, 0.11, false)};
  const nlohmann::json v = make_verdict(c, names, 3, runs);
  REQUIRE(v["claims"].size() == 3);
  const auto& id = v["claims"][0];
  CHECK(id["claim"] == "identification");
  CHECK(id["holds_for_main"] == true);
  CHECK(id["fails_for_control"] == true);
  CHECK(id["p_value"].get<double>() < 0.05);
  CHECK(id["supported"] == true);
  CHECK(v["claims"][1]["supported"] == false);  // high-norm emerged nowhere
  CHECK(v["claims"][2]["p_value"] == 1.0);      // sink rates all zero: degenerate, equal
  CHECK(v["variants"]["main"]["emerged"]["identification"] == 3);
  CHECK_THAT(v["variants"]["ctl"]["metrics"][3]["mean"].get<double>(), WithinRel(0.11, 1e-12));

  // One control seed identifying is a minority: the control still fails; two is a majority.
  runs[3].metrics.emerged_identification = 50;
  CHECK(make_verdict(c, names, 3, runs)["claims"][0]["supported"] == true);
  runs[4].metrics.emerged_identification = 50;
  CHECK(make_verdict(c, names, 3, runs)["claims"][0]["supported"] == false);
  // With overlapping metrics the test fails even if emergence differs.
  runs[3].metrics.emerged_identification.reset();
  runs[4].metrics.emerged_identification.reset();
  runs[3].metrics.l1_active_attn_to_0 = 0.99;
  runs[4].metrics.l1_active_attn_to_0 = 0.90;
  CHECK(make_verdict(c, names, 3, runs)["claims"][0]["supported"] == false);
}

TEST_CASE("the verdict's intervals stay inside their ranges and it reports effect sizes and chance",
          "[experiment][verdict]") {
  const ExperimentConfig c = parse_experiment_config(kConfig, "x.toml", "--config");
  const std::vector<std::string> names = {"main", "ctl"};
  std::vector<RunRecord> runs = {record("main", 0, 0.95, true),  record("main", 1, 1.0, true),
                                 record("main", 2, 0.99, false), record("ctl", 0, 0.0, false),
                                 record("ctl", 1, 0.02, false),  record("ctl", 2, 0.01, false)};
  for (RunRecord& r : runs) {
    r.metrics.first_trigger_accuracy = r.variant == "main" ? 0.98 : 0.3 + 0.01 * r.seed_index;
    r.metrics.task_accuracy = r.metrics.first_trigger_accuracy;
  }
  ContentOnlyChance chance;
  chance.first_trigger_accuracy = 0.45;
  chance.trigger_accuracy = 0.5;
  chance.rows = 1000;
  const nlohmann::json v = make_verdict(c, names, 3, runs, chance);
  // Every metric interval of a variant lies between its smallest and largest seed value (up to the
  // rounding of a mean), so a fraction's interval never leaves [0, 1] even with a seed at 1.0.
  for (const auto& m : v["variants"]["main"]["metrics"]) {
    if (m["metric"] != "l1_active_attn_to_0") continue;
    CHECK(m["lo"].get<double>() >= 0.95 - 1e-15);
    CHECK(m["hi"].get<double>() <= 1.0);
  }
  // 2 of 3 seeds identified: Clopper-Pearson [0.0943, 0.9916].
  const auto& frac = v["variants"]["main"]["emerged_interval"]["identification"];
  CHECK_THAT(frac["lo"].get<double>(), WithinAbs(0.094299, 1e-5));
  CHECK_THAT(frac["hi"].get<double>(), WithinAbs(0.991596, 1e-5));
  CHECK(v["variants"]["ctl"]["emerged_interval"]["identification"]["lo"] == 0.0);
  const auto& id = v["claims"][0];
  CHECK_THAT(id["difference"]["mean"].get<double>(), WithinAbs((0.95 + 1.0 + 0.99 - 0.03) / 3.0, 1e-12));
  CHECK(id["difference"]["lo"].get<double>() <= id["difference"]["mean"].get<double>());
  CHECK(id["difference"]["lo"].get<double>() >= 0.95 - 0.02);  // smallest main minus largest control
  CHECK(id["cohens_d"].get<double>() > 10.0);
  CHECK(id["main"]["lo"].get<double>() >= 0.95 - 1e-15);
  // The control's chance level sits next to both arms' accuracies.
  const auto& ch = v["control_chance"];
  CHECK(ch["first_trigger_accuracy"] == 0.45);
  CHECK_THAT(ch["control"]["first_trigger_accuracy"]["mean"].get<double>(), WithinAbs(0.31, 1e-12));
  CHECK_THAT(ch["main"]["trigger_accuracy"]["mean"].get<double>(), WithinAbs(0.98, 1e-12));
  CHECK_FALSE(make_verdict(c, names, 3, runs).contains("control_chance"));
}

TEST_CASE("a high norm or sink that came and went counts in the probe shares and as ever, not as emerged",
          "[experiment][verdict]") {
  // Probes at steps 0..3: the high norm holds at steps 1 and 2, the sink at step 2 only.
  p0sim::sim::TrainResult r;
  for (int step = 0; step < 4; ++step) {
    p0sim::sim::ProbeRecord p;
    p.step = step;
    p.layers.resize(2);
    p.high_norm = step == 1 || step == 2;
    p.sink = step == 2;
    r.probes.push_back(p);
  }
  r.emergence.high_norm.reset();  // analyse_trace's rule: held from some probe to the last
  const RunMetrics m = run_metrics(r);
  CHECK(m.high_norm_probes == 0.5);
  CHECK(m.sink_probes == 0.25);
  CHECK_FALSE(m.emerged_high_norm.has_value());

  const ExperimentConfig c = parse_experiment_config(kConfig, "x.toml", "--config");
  std::vector<RunRecord> runs = {record("main", 0, 0.9, true), record("main", 1, 0.9, true),
                                 record("main", 2, 0.9, true), record("ctl", 0, 0.0, false),
                                 record("ctl", 1, 0.0, false), record("ctl", 2, 0.0, false)};
  runs[0].metrics.high_norm_probes = 0.5;  // came and went
  runs[1].metrics.high_norm_probes = 0.25;
  runs[1].metrics.emerged_high_norm = 3;  // and held from step 3 to the end
  runs[2].metrics.sink_probes = 0.1;
  const nlohmann::json v = make_verdict(c, {"main", "ctl"}, 3, runs);
  const auto& main = v["variants"]["main"];
  CHECK(main["emerged"]["high_norm"] == 1);
  CHECK(main["ever"]["high_norm"] == 2);
  CHECK(main["ever"]["sink"] == 1);
  CHECK(v["variants"]["ctl"]["ever"]["high_norm"] == 0);
  // 2 of 3 runs: Clopper-Pearson [0.0943, 0.9916]
  CHECK_THAT(main["ever_interval"]["high_norm"]["lo"].get<double>(), WithinAbs(0.094299, 1e-5));
  CHECK_THAT(main["ever_interval"]["high_norm"]["hi"].get<double>(), WithinAbs(0.991596, 1e-5));
  bool summarised = false;
  for (const auto& x : main["metrics"])
    if (x["metric"] == "high_norm_probes") {
      summarised = true;
      CHECK_THAT(x["mean"].get<double>(), WithinAbs(0.25, 1e-12));
    }
  CHECK(summarised);
}

}  // namespace study_experiment_verdict_test
