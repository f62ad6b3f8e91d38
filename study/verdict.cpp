#include "study/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iomanip>
#include <limits>
#include <sstream>

#include "common/engine_version.hpp"
#include "common/json_number.hpp"
#include "common/stats.hpp"
#include "sim/probes.hpp"
#include "study/stats.hpp"

namespace p0sim::study {

std::size_t max_layers(const std::vector<RunRecord>& runs) {
  std::size_t L = 0;
  for (const RunRecord& r : runs) L = std::max(L, r.metrics.layers.size());
  return L;
}

// Verdict rules (documented in configs/p0sink.toml and the README):
//  - a claim HOLDS for a variant when its emergence step exists (the claim holds from that probe to
//    the end of training) in a strict majority of the variant's seeds;
//  - each claim has one final metric compared between main and control by a two-sided Welch's
//    t-test: identification -> l1_active_attn_to_0, high-norm direction -> the maximum over layers
//    of p0_norm_ratio, sink -> the maximum of sink_rate over the layers the sink claim looks at
//    (after the first; layer 0 if L = 1);
//  - the claim is SUPPORTED when it holds for main, fails for the control, the main mean exceeds
//    the control mean and p < 0.05.
nlohmann::json make_verdict(const ExperimentConfig& c, const std::vector<std::string>& variants, int seeds,
                            const std::vector<RunRecord>& runs, const std::optional<ContentOnlyChance>& chance) {
  constexpr double kLevel = 0.95, kAlpha = 0.05;
  const std::size_t L = max_layers(runs);
  nlohmann::json v;
  v["seeds"] = seeds;
  v["engine_version"] = kEngineVersion;
  v["level"] = kLevel;
  v["alpha"] = kAlpha;
  v["main"] = c.main;
  v["control"] = c.control;
  v["variant_order"] = variants;
  v["rule"] =
      "a claim holds for a variant when it emerged (held from some probe to the end) in a strict majority of seeds; "
      "supported = holds for main, fails for control, main mean > control mean and Welch p < alpha; "
      "intervals of means are bootstrap percentiles at level (10000 resamples, so they stay inside the values' range); "
      "emerged counts carry Clopper-Pearson intervals at level; effect size = Cohen's d (pooled) and the difference of "
      "means with its bootstrap interval";
  nlohmann::json table = nlohmann::json::object();
  for (const std::string& name : variants) {
    std::vector<const RunRecord*> rs;
    for (const RunRecord& r : runs)
      if (r.variant == name) rs.push_back(&r);
    nlohmann::json metrics = nlohmann::json::array();
    for (const ResultColumn& col : result_columns(L)) {
      if (!col.metric->in_verdict) continue;
      std::vector<double> x;
      for (const RunRecord* r : rs) {
        const double val = col.metric->value(r->metrics, col.layer);
        if (std::isfinite(val)) x.push_back(val);
      }
      const Interval iv = bootstrap_mean_interval(x, kLevel);
      metrics.push_back({{"metric", col.name},
                         {"n", iv.n},
                         {"mean", json_number(iv.mean)},
                         {"lo", json_number(iv.lo)},
                         {"hi", json_number(iv.hi)}});
    }
    int id = 0, hn = 0, sk = 0, hn_ever = 0, sk_ever = 0;
    for (const RunRecord* r : rs) {
      id += r->metrics.emerged_identification.has_value();
      hn += r->metrics.emerged_high_norm.has_value();
      sk += r->metrics.emerged_sink.has_value();
      hn_ever += r->metrics.high_norm_probes > 0.0;
      sk_ever += r->metrics.sink_probes > 0.0;
    }
    const long n_runs = static_cast<long>(rs.size());
    auto fraction = [&](int k) {
      const Proportion p = clopper_pearson(k, n_runs, kLevel);
      return nlohmann::json{{"fraction", json_number(p.p)}, {"lo", json_number(p.lo)}, {"hi", json_number(p.hi)}};
    };
    table[name] = {
        {"runs", rs.size()},
        {"metrics", metrics},
        {"emerged", {{"identification", id}, {"high_norm", hn}, {"sink", sk}}},
        {"emerged_interval", {{"identification", fraction(id)}, {"high_norm", fraction(hn)}, {"sink", fraction(sk)}}},
        // held at some probe, to the end or not: a state that came and went counts here, not in emerged
        {"ever", {{"high_norm", hn_ever}, {"sink", sk_ever}}},
        {"ever_interval", {{"high_norm", fraction(hn_ever)}, {"sink", fraction(sk_ever)}}}};
  }
  v["variants"] = table;

  struct Claim {
    const char* name;
    const char* metric;
    std::function<double(const RunMetrics&)> value;
    std::function<bool(const RunMetrics&)> emerged;
  };
  auto max_of = [](const std::vector<double>& x, std::size_t from) {
    double m = kNaN;
    for (std::size_t i = from; i < x.size(); ++i)
      if (std::isfinite(x[i])) m = std::isfinite(m) ? std::max(m, x[i]) : x[i];
    return m;
  };
  const Claim claims[] = {
      {"identification", "l1_active_attn_to_0", [](const RunMetrics& m) { return m.l1_active_attn_to_0; },
       [](const RunMetrics& m) { return m.emerged_identification.has_value(); }},
      {"high_norm", "max_l p0_norm_ratio",
       [&](const RunMetrics& m) { return max_of(layer_values(m, "p0_norm_ratio"), 0); },
       [](const RunMetrics& m) { return m.emerged_high_norm.has_value(); }},
      {"sink", "max_{l>=1} sink_rate",
       [&](const RunMetrics& m) {
         return max_of(layer_values(m, "sink_rate"),
                       static_cast<std::size_t>(sim::first_sink_layer(static_cast<int>(m.layers.size()))));
       },
       [](const RunMetrics& m) { return m.emerged_sink.has_value(); }},
  };
  if (chance) {
    // What main and the control reach against the best any content-only observer can do.
    auto accuracy = [&](const std::string& name, double RunMetrics::*field) {
      std::vector<double> x;
      for (const RunRecord& r : runs)
        if (r.variant == name && std::isfinite(r.metrics.*field)) x.push_back(r.metrics.*field);
      const Interval iv = bootstrap_mean_interval(x, kLevel);
      return nlohmann::json{{"mean", json_number(iv.mean)}, {"lo", json_number(iv.lo)}, {"hi", json_number(iv.hi)}};
    };
    v["control_chance"] = {
        {"observer",
         "Bayes-optimal prediction of x_0 from x_t and the multiset of x_0..x_t at a firing trigger t (no order, "
         "no position; at first triggers also told that t is the first): the most a content-only control can "
         "reach"},
        {"rows", chance->rows},
        {"first_trigger_accuracy", json_number(chance->first_trigger_accuracy)},
        {"trigger_accuracy", json_number(chance->trigger_accuracy)},
        {"first_queries", chance->first_queries},
        {"queries", chance->queries},
        {"main",
         {{"first_trigger_accuracy", accuracy(c.main, &RunMetrics::first_trigger_accuracy)},
          {"trigger_accuracy", accuracy(c.main, &RunMetrics::task_accuracy)}}},
        {"control",
         {{"first_trigger_accuracy", accuracy(c.control, &RunMetrics::first_trigger_accuracy)},
          {"trigger_accuracy", accuracy(c.control, &RunMetrics::task_accuracy)}}}};
  }
  nlohmann::json out = nlohmann::json::array();
  if (c.main.empty() && c.control.empty()) {  // a search: no claim is tested
    v["claims"] = out;
    return v;
  }
  for (const Claim& cl : claims) {
    auto side = [&](const std::string& name, std::vector<double>& x, int& emerged, int& n) {
      emerged = n = 0;
      for (const RunRecord& r : runs) {
        if (r.variant != name) continue;
        ++n;
        emerged += cl.emerged(r.metrics);
        const double val = cl.value(r.metrics);
        if (std::isfinite(val)) x.push_back(val);
      }
    };
    std::vector<double> xm, xc;
    int em = 0, nm = 0, ec = 0, nc = 0;
    side(c.main, xm, em, nm);
    side(c.control, xc, ec, nc);
    const bool holds_main = 2 * em > nm, holds_control = 2 * ec > nc;
    nlohmann::json j{{"claim", cl.name},
                     {"metric", cl.metric},
                     {"main", {{"emerged", em}, {"runs", nm}, {"holds", holds_main}}},
                     {"control", {{"emerged", ec}, {"runs", nc}, {"holds", holds_control}}},
                     {"holds_for_main", holds_main},
                     {"fails_for_control", !holds_control},
                     {"test", "welch-t two-sided"}};
    const Interval im = bootstrap_mean_interval(xm, kLevel), ic = bootstrap_mean_interval(xc, kLevel);
    const Interval diff = bootstrap_difference_interval(xm, xc, kLevel);
    j["main"]["mean"] = json_number(im.mean);
    j["main"]["lo"] = json_number(im.lo);
    j["main"]["hi"] = json_number(im.hi);
    j["control"]["mean"] = json_number(ic.mean);
    j["control"]["lo"] = json_number(ic.lo);
    j["control"]["hi"] = json_number(ic.hi);
    j["difference"] = {{"mean", json_number(diff.mean)}, {"lo", json_number(diff.lo)}, {"hi", json_number(diff.hi)}};
    j["cohens_d"] = json_number(cohens_d(xm, xc));
    bool supported = false;
    if (xm.size() >= 2 && xc.size() >= 2) {
      const WelchResult w = welch_t_test(xm, xc);
      j["t"] = json_number(w.t);
      j["dof"] = json_number(w.dof);
      j["p_value"] = w.p_value;
      j["degenerate"] = w.degenerate;
      supported = holds_main && !holds_control && im.mean > ic.mean && w.p_value < kAlpha;
    } else {
      j["t"] = nullptr;
      j["dof"] = nullptr;
      j["p_value"] = nullptr;
      j["degenerate"] = true;
    }
    j["supported"] = supported;
    out.push_back(j);
  }
  v["claims"] = out;
  return v;
}

std::string verdict_table(const nlohmann::json& v) {
  std::ostringstream out;
  auto num = [](const nlohmann::json& x) {
    if (x.is_null()) return std::string("-");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", x.get<double>());
    return std::string(buf);
  };
  out << "per variant: mean [95% bootstrap percentile interval] over seeds\n";
  for (const auto& name : v["variant_order"]) {
    const auto& t = v["variants"][name.get<std::string>()];
    out << "\n"
        << name.get<std::string>() << " (" << t["runs"].get<int>() << " runs; emerged: identification "
        << t["emerged"]["identification"].get<int>() << ", high-norm " << t["emerged"]["high_norm"].get<int>()
        << ", sink " << t["emerged"]["sink"].get<int>() << ")\n";
    for (const auto& m : t["metrics"])
      out << "  " << std::left << std::setw(26) << m["metric"].get<std::string>() << std::right << std::setw(10)
          << num(m["mean"]) << "  [" << num(m["lo"]) << ", " << num(m["hi"]) << "]\n";
  }
  if (v["claims"].empty()) {
    out << "\nno claims tested: a search (main and control are empty); compare the cells above\n";
    return out.str();
  }
  out << "\nclaims (main '" << v["main"].get<std::string>() << "' vs control '" << v["control"].get<std::string>()
      << "'):\n";
  for (const auto& c : v["claims"]) {
    out << "  " << std::left << std::setw(15) << c["claim"].get<std::string>() << std::right << " main emerged "
        << c["main"]["emerged"].get<int>() << "/" << c["main"]["runs"].get<int>() << ", control emerged "
        << c["control"]["emerged"].get<int>() << "/" << c["control"]["runs"].get<int>() << "; "
        << c["metric"].get<std::string>() << " " << num(c["main"]["mean"]) << " vs " << num(c["control"]["mean"])
        << ", difference " << num(c["difference"]["mean"]) << " [" << num(c["difference"]["lo"]) << ", "
        << num(c["difference"]["hi"]) << "], Cohen's d " << num(c["cohens_d"]) << ", Welch p = " << num(c["p_value"])
        << (c["degenerate"].get<bool>() ? " (zero variance)" : "") << " -> "
        << (c["supported"].get<bool>() ? "SUPPORTED" : "not supported") << "\n";
  }
  if (v.contains("control_chance")) {
    const auto& ch = v["control_chance"];
    out << "\ncontent-only chance (Bayes-optimal from x_t and the prefix's multiset, " << ch["rows"].get<long>()
        << " rows): first trigger " << num(ch["first_trigger_accuracy"]) << ", every trigger "
        << num(ch["trigger_accuracy"]) << "\n";
    for (const char* side : {"main", "control"})
      out << "  " << std::left << std::setw(8) << side << std::right << " first-trigger accuracy "
          << num(ch[side]["first_trigger_accuracy"]["mean"]) << " [" << num(ch[side]["first_trigger_accuracy"]["lo"])
          << ", " << num(ch[side]["first_trigger_accuracy"]["hi"]) << "], every trigger "
          << num(ch[side]["trigger_accuracy"]["mean"]) << " [" << num(ch[side]["trigger_accuracy"]["lo"]) << ", "
          << num(ch[side]["trigger_accuracy"]["hi"]) << "]\n";
  }
  return out.str();
}

}  // namespace p0sim::study
