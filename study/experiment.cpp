#include "study/experiment.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iomanip>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <boost/math/distributions/students_t.hpp>

#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"
#include "common/json_number.hpp"
#include "common/rng.hpp"
#include "common/stats.hpp"
#include "sim/checkpoint.hpp"
#include "study/config_toml.hpp"
#include "study/jobs.hpp"

namespace p0sim::study {
namespace fs = std::filesystem;
using namespace p0sim::sim;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Experiment keys are run options within every run's scope (not `train`-only ones).
const RunOption* experiment_key(const std::string& key) {
  const RunOption* o = find_run_option(key);
  return o != nullptr && (o->scope & kEveryRun) ? o : nullptr;
}

std::string unknown_key(const TomlEntry& e, const std::string& section) {
  std::vector<std::string> keys;
  for (const RunOption& o : run_options())
    if (o.scope & kEveryRun) keys.push_back(o.name);
  const std::string near = nearest_option(e.key, keys);
  return e.at + ": unknown key '" + e.key + "'" + (section.empty() ? "" : " in [" + section + "]") +
         (near.empty() ? "" : " (did you mean '" + near + "'?)");
}

std::size_t max_layers(const std::vector<RunRecord>& runs) {
  std::size_t L = 0;
  for (const RunRecord& r : runs) L = std::max(L, r.metrics.layers.size());
  return L;
}

}  // namespace

ExperimentConfig parse_experiment_config(const std::string& text, const std::string& where, const std::string& option) {
  const TomlDocument doc = parse_toml(text, where, option);
  ExperimentConfig c;
  for (const TomlEntry& e : doc.root) {
    if (experiment_key(e.key) == nullptr) throw UsageError(option, unknown_key(e, ""));
    if (e.is_array) throw UsageError(option, e.where + ": expected a single value, not an array");
    c.base.set(e.key, e.text, option + ": " + e.where);
  }
  for (const TomlSection& s : doc.sections) {
    const std::string at = where + ":" + std::to_string(s.line);
    if (s.name == "experiment") {
      for (const TomlEntry& e : s.entries) {
        if (e.key != "main" && e.key != "control")
          throw UsageError(option, e.at + ": unknown key '" + e.key + "' in [experiment] (expected main, control)");
        (e.key == "main" ? c.main : c.control) = e.text;
      }
      continue;
    }
    if (s.name.rfind("variants.", 0) != 0 || s.name.size() == 9)
      throw UsageError(option, at + ": unknown section '[" + s.name + "]' (expected [experiment] or [variants.NAME])");
    ExperimentVariant v{s.name.substr(9), {}};
    for (const TomlEntry& e : s.entries) {
      if (experiment_key(e.key) == nullptr) throw UsageError(option, unknown_key(e, s.name));
      if (e.key == "seed") throw UsageError(option, e.where + ": 'seed' is the experiment's base seed; set it at the top level");
      if (e.is_array) throw UsageError(option, e.where + ": expected a single value, not an array");
      OptionValues check;
      check.set(e.key, e.text, option + ": " + e.where);
      v.overrides.emplace_back(e.key, e.text);
    }
    c.variants.push_back(std::move(v));
  }
  auto has = [&](const std::string& n) {
    return std::any_of(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v.name == n; });
  };
  // main = control = "" declares a search: every variant is a cell, no claim is tested.
  const bool search = c.main.empty() && c.control.empty();
  if (!search) {
    if (!has(c.main)) throw UsageError(option, where + ": no [variants." + c.main + "] (the main variant)");
    if (!has(c.control)) throw UsageError(option, where + ": no [variants." + c.control + "] (the control variant)");
    if (c.main == c.control) throw UsageError(option, where + ": main and control must be different variants");
  }
  for (const auto& v : c.variants) {
    const TrainConfig t = make_train_config(variant_options(c, v), option);
    if (t.probe.every <= 0)
      throw UsageError(option, where + ": variant '" + v.name + "': probe-every must be > 0 (the metrics come from probes)");
  }
  return c;
}

ExperimentConfig read_experiment_config(const fs::path& path, const std::string& option) {
  std::ifstream in(path);
  if (!in) throw UsageError(option, "cannot read '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_experiment_config(text.str(), path.string(), option);
}

OptionValues variant_options(const ExperimentConfig& c, const ExperimentVariant& v) {
  OptionValues o = c.base;
  for (const auto& [k, val] : v.overrides) o.set(k, val, "--config");
  return o;
}

TrainConfig make_train_config(const OptionValues& o, const std::string& option) {
  try {
    return o.spec().train;
  } catch (const UsageError& e) {
    // The train checks name train options (--lr ...); here they come from the config file.
    throw UsageError(option, e.what());
  }
}

std::string train_options_toml(const OptionValues& options) {
  return "# resolved configuration of one experiment run; pass to 'p0sim train --config'\n" + options.toml();
}

std::string experiment_toml(const ExperimentConfig& c) {
  std::string out = "# resolved configuration of 'p0sim experiment'; pass back with --config\n";
  out += c.base.toml();
  out += "\n[experiment]\nmain = \"" + c.main + "\"\ncontrol = \"" + c.control + "\"\n";
  for (const auto& v : c.variants) {
    out += "\n[variants." + v.name + "]\n";
    for (const auto& [k, val] : v.overrides) out += k + " = " + toml_value(*find_run_option(k), val) + "\n";
  }
  return out;
}

std::vector<RunRecord> run_experiment(const ExperimentConfig& c, const std::vector<std::string>& variants, int seeds,
                                      int threads, const fs::path& out_dir,
                                      const std::function<void(const RunRecord&)>& on_done, bool resume) {
  struct Job {
    const ExperimentVariant* variant;
    int seed_index;
  };
  std::vector<Job> jobs;
  for (const std::string& name : variants) {
    const auto it = std::find_if(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v.name == name; });
    if (it == c.variants.end()) throw UsageError("--variants", "no variant '" + name + "' in the config");
    for (int i = 0; i < seeds; ++i) jobs.push_back({&*it, i});
  }
  const std::uint64_t base_seed = make_train_config(c.base, "--config").seed;
  std::vector<RunRecord> records(jobs.size());
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) order[j] = j;
  run_jobs(order, threads, [&](std::size_t j) {
        const Job& job = jobs[j];
        const std::uint64_t seed = derive_seed(base_seed, job.variant->name, static_cast<std::uint64_t>(job.seed_index));
        OptionValues options = variant_options(c, *job.variant);
        options.set("seed", std::to_string(seed), "--config");
        const TrainConfig tc = make_train_config(options, "--config");
        const int checkpoint_every = options.spec().checkpoint_every;
        const fs::path dir = out_dir / "runs" / job.variant->name / ("seed-" + std::to_string(job.seed_index));
        // Every run keeps its final checkpoint: on --resume a finished run's metrics come from it.
        LoadedCheckpoint checkpoint;
        if (resume) checkpoint = load_latest_checkpoint(checkpoint_dir(dir), tc, "--resume");
        const bool finished = checkpoint.found && checkpoint.state.step == tc.steps && fs::exists(dir / "summary.json");
        TrainResult r;
        if (finished) {
          r.probes = checkpoint.state.probes;
          r.emergence = analyse_trace(r.probes, tc.probe, tc.data.task);
          r.final_loss = checkpoint.state.log.empty() ? std::nan("") : checkpoint.state.log.back().loss;
        } else {
          fs::create_directories(dir);
          write_file_atomic(dir / "config.toml", train_options_toml(options));
          Model<float> model(tc.model, tc.batch);
          TrainControl control;
          control.checkpoint_every = checkpoint_every;
          control.checkpoint_at_end = true;
          control.checkpoint_location = checkpoint_dir(dir).string();
          control.save_checkpoint = [&](const TrainState& st) { write_checkpoint(checkpoint_dir(dir), tc, st); };
          if (checkpoint.found) control.resume = &checkpoint.state;
          r = train(model, tc, control);
          write_run(dir, model, tc, r);
        }
        records[j] = RunRecord{job.variant->name, job.seed_index, seed, run_metrics(r)};
      }, [&](std::size_t j) {
        if (on_done) on_done(records[j]);
      });
  return records;
}

std::string results_csv(const std::vector<RunRecord>& runs) {
  const std::size_t L = max_layers(runs);
  std::string out = results_header({"variant", "seed_index", "seed"}, L);
  for (const RunRecord& r : runs)
    out += results_row({r.variant, std::to_string(r.seed_index), std::to_string(r.seed)}, r.metrics, L) + "\n";
  return out;
}

Interval mean_interval(const std::vector<double>& x, double level) {
  RunningStats s;
  for (double v : x) s.add(v);
  Interval out;
  out.n = static_cast<long>(s.n);
  out.mean = s.n > 0 ? s.mean : kNaN;
  const double h = s.ci_half_width(level);  // NaN when n < 2
  out.lo = out.mean - h;
  out.hi = out.mean + h;
  return out;
}

WelchResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b) {
  RunningStats sa, sb;
  for (double v : a) sa.add(v);
  for (double v : b) sb.add(v);
  if (sa.n < 2 || sb.n < 2) throw std::domain_error("Welch's t-test needs at least 2 values per sample");
  const double va = sa.variance() / static_cast<double>(sa.n), vb = sb.variance() / static_cast<double>(sb.n);
  WelchResult r;
  const double diff = sa.mean - sb.mean;
  if (va + vb == 0.0) {
    r.degenerate = true;
    r.t = diff == 0.0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), diff);
    r.dof = static_cast<double>(sa.n + sb.n - 2);
    r.p_value = diff == 0.0 ? 1.0 : 0.0;
    return r;
  }
  r.t = diff / std::sqrt(va + vb);
  // Welch-Satterthwaite: a zero-variance sample contributes nothing to the denominator.
  r.dof = (va + vb) * (va + vb) /
          (va * va / static_cast<double>(sa.n - 1) + vb * vb / static_cast<double>(sb.n - 1));
  boost::math::students_t_distribution<double, MathPolicy> t(r.dof);
  r.p_value = 2.0 * boost::math::cdf(boost::math::complement(t, std::fabs(r.t)));
  return r;
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
                            const std::vector<RunRecord>& runs) {
  constexpr double kLevel = 0.95, kAlpha = 0.05;
  const std::size_t L = max_layers(runs);
  nlohmann::json v;
  v["seeds"] = seeds;
  v["level"] = kLevel;
  v["alpha"] = kAlpha;
  v["main"] = c.main;
  v["control"] = c.control;
  v["variant_order"] = variants;
  v["rule"] =
      "a claim holds for a variant when it emerged (held from some probe to the end) in a strict majority of seeds; "
      "supported = holds for main, fails for control, main mean > control mean and Welch p < alpha";
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
      const Interval iv = mean_interval(x, kLevel);
      metrics.push_back({{"metric", col.name}, {"n", iv.n}, {"mean", json_number(iv.mean)}, {"lo", json_number(iv.lo)},
                         {"hi", json_number(iv.hi)}});
    }
    int id = 0, hn = 0, sk = 0;
    for (const RunRecord* r : rs) {
      id += r->metrics.emerged_identification.has_value();
      hn += r->metrics.emerged_high_norm.has_value();
      sk += r->metrics.emerged_sink.has_value();
    }
    table[name] = {{"runs", rs.size()},
                   {"metrics", metrics},
                   {"emerged", {{"identification", id}, {"high_norm", hn}, {"sink", sk}}}};
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
      {"high_norm", "max_l p0_norm_ratio", [&](const RunMetrics& m) { return max_of(layer_values(m, "p0_norm_ratio"), 0); },
       [](const RunMetrics& m) { return m.emerged_high_norm.has_value(); }},
      {"sink", "max_{l>=1} sink_rate",
       [&](const RunMetrics& m) {
         return max_of(layer_values(m, "sink_rate"), static_cast<std::size_t>(first_sink_layer(static_cast<int>(m.layers.size()))));
       },
       [](const RunMetrics& m) { return m.emerged_sink.has_value(); }},
  };
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
    const Interval im = mean_interval(xm, kLevel), ic = mean_interval(xc, kLevel);
    j["main"]["mean"] = json_number(im.mean);
    j["control"]["mean"] = json_number(ic.mean);
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
  out << "per variant: mean [95% Student-t interval] over seeds\n";
  for (const auto& name : v["variant_order"]) {
    const auto& t = v["variants"][name.get<std::string>()];
    out << "\n" << name.get<std::string>() << " (" << t["runs"].get<int>() << " runs; emerged: identification "
        << t["emerged"]["identification"].get<int>() << ", high-norm " << t["emerged"]["high_norm"].get<int>() << ", sink "
        << t["emerged"]["sink"].get<int>() << ")\n";
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
        << ", Welch p = " << num(c["p_value"]) << (c["degenerate"].get<bool>() ? " (zero variance)" : "") << " -> "
        << (c["supported"].get<bool>() ? "SUPPORTED" : "not supported") << "\n";
  }
  return out.str();
}

}  // namespace p0sim::study
