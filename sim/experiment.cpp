#include "sim/experiment.hpp"

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
#include "common/rng.hpp"
#include "common/stats.hpp"
#include "sim/checkpoint.hpp"

namespace p0sim::sim {
namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// `p0sim train`'s options and defaults (cli/sim_commands.cpp), so a variant means what the same
// options mean to `p0sim train`. "seed" is the experiment's base seed.
const KeyValues kTrainDefaults = {
    {"vocab", "64"},          {"d-model", "64"},       {"heads", "4"},           {"layers", "2"},
    {"d-ff", "0"},            {"seq-len", "32"},       {"batch", "32"},          {"task", "markov"},
    {"markov-alpha", "0.1"},  {"triggers", "4"},       {"trigger-prob", "0.1"},  {"filler", "uniform"},
    {"keys", "4"},            {"values", "8"},         {"probe-every", "50"},    {"probe-batch", "64"},  {"ablate", "false"},
    {"emerge-attn", "0.5"},   {"emerge-accuracy", "0.9"}, {"emerge-ratio", "2"}, {"emerge-cos", "0.9"},
    {"sink-eps", "0.3"},      {"steps", "1000"},       {"lr", "0.001"},          {"warmup", "0"},
    {"schedule", "constant"}, {"weight-decay", "0.1"}, {"beta1", "0.9"},         {"beta2", "0.95"},
    {"clip", "1"},            {"seed", "1"},           {"mask", "causal"},       {"attn", "softmax"},
    {"pos", "none"},          {"bos", "false"},        {"norm", "rms"},          {"act", "gelu"},
    {"log-every", "100"},     {"checkpoint-every", "0"},
};

bool is_train_key(const std::string& k) {
  return std::any_of(kTrainDefaults.begin(), kTrainDefaults.end(), [&](const auto& kv) { return kv.first == k; });
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool bare_key(const std::string& k) {
  return !k.empty() && std::all_of(k.begin(), k.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_';
  });
}

// One TOML value of the subset we accept: a basic string, true/false, or a bare number.
// Returns the value with string quotes removed; `rest` receives anything after it.
std::string parse_value(const std::string& text, const std::string& where) {
  if (!text.empty() && text[0] == '"') {
    std::string out;
    std::size_t i = 1;
    for (; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      out.push_back(text[i]);
    }
    if (i >= text.size()) throw std::runtime_error(where + ": unterminated string");
    const std::string rest = trim(text.substr(i + 1));
    if (!rest.empty() && rest[0] != '#') throw std::runtime_error(where + ": unexpected text after the value");
    return out;
  }
  std::string v = trim(text.substr(0, text.find('#')));
  if (v.empty()) throw std::runtime_error(where + ": missing value");
  if (v == "true" || v == "false") return v;
  char* end = nullptr;
  std::strtod(v.c_str(), &end);
  if (end != v.c_str() + v.size()) throw std::runtime_error(where + ": expected a string, number or true/false, got '" + v + "'");
  return v;
}

void set_key(KeyValues& kv, const std::string& key, const std::string& value) {
  for (auto& [k, v] : kv)
    if (k == key) {
      v = value;
      return;
    }
  kv.emplace_back(key, value);
}

const std::string& get(const KeyValues& kv, const std::string& key) {
  for (const auto& [k, v] : kv)
    if (k == key) return v;
  throw std::logic_error("experiment: no key " + key);
}

std::string toml_value(const std::string& key, const std::string& v) {
  static const std::set<std::string> strings = {"task", "filler", "schedule", "mask", "attn", "pos", "norm", "act"};
  if (!strings.count(key)) return v;
  std::string out = "\"";
  for (char ch : v) {
    if (ch == '"' || ch == '\\') out.push_back('\\');
    out.push_back(ch);
  }
  return out + "\"";
}

template <typename E, std::size_t N>
E parse_enum(const std::string& option, const std::string& key, const std::string& s, const E (&values)[N]) {
  std::string accepted;
  for (E e : values) {
    if (to_string(e) == s) return e;
    accepted += (accepted.empty() ? "" : ", ") + to_string(e);
  }
  throw UsageError(option, "key '" + key + "': '" + s + "' is not one of " + accepted);
}

long long parse_int(const std::string& option, const std::string& key, const std::string& s) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0' || errno == ERANGE || v < 0 || v > std::numeric_limits<int>::max())
    throw UsageError(option, "key '" + key + "': expected a non-negative integer, got '" + s + "'");
  return v;
}

double parse_double(const std::string& option, const std::string& key, const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !std::isfinite(v))
    throw UsageError(option, "key '" + key + "': expected a finite number, got '" + s + "'");
  return v;
}

std::string csv_num(double v) { return std::isfinite(v) ? fmt17(v) : std::string(); }
nlohmann::json json_num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// The flat metric columns of a run: name and value, per-layer ones suffixed _l<l>, up to L layers.
std::vector<std::pair<std::string, double>> flat_metrics(const RunMetrics& m, std::size_t L) {
  std::vector<std::pair<std::string, double>> out = {{"loss", m.loss},
                                                     {"copy_accuracy", m.copy_accuracy},
                                                     {"first_trigger_accuracy", m.first_trigger_accuracy},
                                                     {"l1_active_attn_to_0", m.l1_active_attn_to_0}};
  const std::pair<const char*, const std::vector<double>*> layered[] = {{"p0_norm_ratio", &m.p0_norm_ratio},
                                                                        {"p0_cos", &m.p0_cos},
                                                                        {"sink_rate", &m.sink_rate},
                                                                        {"attn_to_0", &m.attn_to_0},
                                                                        {"attn_to_1", &m.attn_to_1}};
  for (std::size_t l = 0; l < L; ++l)
    for (const auto& [name, v] : layered) out.emplace_back(std::string(name) + "_l" + std::to_string(l), l < v->size() ? (*v)[l] : kNaN);
  return out;
}

std::size_t max_layers(const std::vector<RunRecord>& runs) {
  std::size_t L = 0;
  for (const RunRecord& r : runs) L = std::max(L, r.metrics.p0_norm_ratio.size());
  return L;
}

}  // namespace

ExperimentConfig parse_experiment_config(const std::string& text, const std::string& where, const std::string& option) {
  ExperimentConfig c;
  c.base = kTrainDefaults;
  std::set<std::string> seen_base, seen_experiment;
  std::string section;
  ExperimentVariant* variant = nullptr;
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  try {
    while (std::getline(in, raw)) {
      ++line_no;
      const std::string at = where + ":" + std::to_string(line_no);
      const std::string line = trim(raw);
      if (line.empty() || line[0] == '#') continue;
      if (line[0] == '[') {
        const auto close = line.find(']');
        if (close == std::string::npos || line.rfind("[[", 0) == 0 ||
            (!trim(line.substr(close + 1)).empty() && trim(line.substr(close + 1))[0] != '#'))
          throw std::runtime_error(at + ": malformed section header '" + line + "'");
        section = trim(line.substr(1, close - 1));
        variant = nullptr;
        if (section == "experiment") continue;
        if (section.rfind("variants.", 0) == 0 && bare_key(section.substr(9))) {
          const std::string name = section.substr(9);
          for (const auto& v : c.variants)
            if (v.name == name) throw std::runtime_error(at + ": variant '" + name + "' defined twice");
          c.variants.push_back({name, {}});
          variant = &c.variants.back();
          continue;
        }
        throw std::runtime_error(at + ": unknown section '[" + section + "]' (expected [experiment] or [variants.NAME])");
      }
      const auto eq = line.find('=');
      if (eq == std::string::npos) throw std::runtime_error(at + ": expected 'key = value'");
      const std::string key = trim(line.substr(0, eq));
      if (!bare_key(key)) throw std::runtime_error(at + ": malformed key '" + key + "'");
      const std::string value = parse_value(trim(line.substr(eq + 1)), at + ": key '" + key + "'");
      if (section == "experiment") {
        if (key != "main" && key != "control")
          throw std::runtime_error(at + ": unknown key '" + key + "' in [experiment] (expected main, control)");
        if (!seen_experiment.insert(key).second) throw std::runtime_error(at + ": duplicate key '" + key + "'");
        (key == "main" ? c.main : c.control) = value;
        continue;
      }
      if (!is_train_key(key))
        throw std::runtime_error(at + ": unknown key '" + key + "'" + (section.empty() ? "" : " in [" + section + "]"));
      if (variant != nullptr) {
        for (const auto& kv : variant->overrides)
          if (kv.first == key) throw std::runtime_error(at + ": duplicate key '" + key + "'");
        if (key == "seed") throw std::runtime_error(at + ": 'seed' is the experiment's base seed; set it at the top level");
        variant->overrides.emplace_back(key, value);
      } else {
        if (!seen_base.insert(key).second) throw std::runtime_error(at + ": duplicate key '" + key + "'");
        set_key(c.base, key, value);
      }
    }
  } catch (const std::runtime_error& e) {
    throw UsageError(option, e.what());
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
    const long long checkpoint_every = parse_int(option, "checkpoint-every", get(variant_options(c, v), "checkpoint-every"));
    if (checkpoint_every < 0 || checkpoint_every > 1000000000)
      throw UsageError(option, where + ": variant '" + v.name + "': checkpoint-every must be in 0..1000000000");
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

KeyValues variant_options(const ExperimentConfig& c, const ExperimentVariant& v) {
  KeyValues kv = c.base;
  for (const auto& [k, val] : v.overrides) set_key(kv, k, val);
  return kv;
}

TrainConfig make_train_config(const KeyValues& o, const std::string& option) {
  auto I = [&](const char* k) { return static_cast<int>(parse_int(option, k, get(o, k))); };
  auto D = [&](const char* k) { return parse_double(option, k, get(o, k)); };
  auto S = [&](const char* k) -> const std::string& { return get(o, k); };
  TrainConfig c;
  c.model.vocab = I("vocab");
  c.model.d_model = I("d-model");
  c.model.heads = I("heads");
  c.model.layers = I("layers");
  c.model.d_ff = I("d-ff") > 0 ? I("d-ff") : 4 * c.model.d_model;
  c.model.seq_len = I("seq-len");
  c.model.mask = parse_enum(option, "mask", S("mask"), {Mask::causal, Mask::bidirectional, Mask::prefix_bidirectional});
  c.model.attn = parse_enum(option, "attn", S("attn"), {Attn::softmax, Attn::softmax1, Attn::sigmoid});
  c.model.pos = parse_enum(option, "pos", S("pos"), {PosEnc::none, PosEnc::rope, PosEnc::absolute});
  if (S("bos") != "true" && S("bos") != "false") throw UsageError(option, "key 'bos': expected true or false, got '" + S("bos") + "'");
  c.model.bos = S("bos") == "true";
  c.model.norm = parse_enum(option, "norm", S("norm"), {Norm::rms, Norm::layer});
  c.model.act = parse_enum(option, "act", S("act"), {Act::gelu, Act::relu});
  c.data.task = parse_enum(option, "task", S("task"), kAllTasks);
  c.data.filler = parse_enum(option, "filler", S("filler"), {Filler::uniform, Filler::markov});
  c.data.vocab = c.model.vocab;
  c.data.seq_len = c.model.seq_len;
  c.data.markov_alpha = D("markov-alpha");
  c.data.triggers = I("triggers");
  c.data.trigger_prob = D("trigger-prob");
  c.data.keys = I("keys");
  c.data.values = I("values");
  char* end = nullptr;
  const std::string& seed = S("seed");
  c.seed = std::strtoull(seed.c_str(), &end, 10);
  if (seed.empty() || seed[0] == '-' || *end != '\0') throw UsageError(option, "key 'seed': expected an unsigned integer, got '" + seed + "'");
  c.data.seed = c.seed;
  if (S("ablate") != "true" && S("ablate") != "false") throw UsageError(option, "key 'ablate': expected true or false, got '" + S("ablate") + "'");
  c.ablate = S("ablate") == "true";
  c.probe.every = I("probe-every");
  c.probe.batch = I("probe-batch");
  c.probe.emerge_attn = D("emerge-attn");
  c.probe.emerge_accuracy = D("emerge-accuracy");
  c.probe.emerge_ratio = D("emerge-ratio");
  c.probe.emerge_cos = D("emerge-cos");
  c.probe.sink_eps = D("sink-eps");
  c.batch = I("batch");
  c.steps = I("steps");
  c.lr = D("lr");
  c.warmup = I("warmup");
  if (S("schedule") != "constant" && S("schedule") != "cosine")
    throw UsageError(option, "key 'schedule': '" + S("schedule") + "' is not one of constant, cosine");
  c.schedule = S("schedule") == "cosine" ? Schedule::cosine : Schedule::constant;
  c.adamw.weight_decay = D("weight-decay");
  c.adamw.beta1 = D("beta1");
  c.adamw.beta2 = D("beta2");
  c.clip = D("clip");
  c.threads = 1;
  c.log_every = std::max(1, I("log-every"));
  try {
    validate(c);
  } catch (const UsageError& e) {
    // The train checks name train options (--lr ...); here they come from the config file.
    throw UsageError(option, e.what());
  }
  return c;
}

std::string train_options_toml(const KeyValues& options) {
  std::string out = "# resolved configuration of one experiment run; pass to 'p0sim train --config'\n";
  for (const auto& [k, v] : options) out += k + " = " + toml_value(k, v) + "\n";
  return out;
}

std::string experiment_toml(const ExperimentConfig& c) {
  std::string out = "# resolved configuration of 'p0sim experiment'; pass back with --config\n";
  for (const auto& [k, v] : c.base) out += k + " = " + toml_value(k, v) + "\n";
  out += "\n[experiment]\nmain = \"" + c.main + "\"\ncontrol = \"" + c.control + "\"\n";
  for (const auto& v : c.variants) {
    out += "\n[variants." + v.name + "]\n";
    for (const auto& [k, val] : v.overrides) out += k + " = " + toml_value(k, val) + "\n";
  }
  return out;
}

RunMetrics run_metrics(const TrainResult& r) {
  if (r.probes.empty()) throw RunError("experiment: a run has no probes");
  const ProbeRecord& last = r.probes.back();
  RunMetrics m;
  m.loss = last.loss;
  m.copy_accuracy = last.scored > 0 ? last.accuracy : kNaN;
  m.first_trigger_accuracy = last.first_scored > 0 ? last.first_accuracy : kNaN;
  const std::size_t L = last.layers.size();
  m.l1_active_attn_to_0 = kNaN;
  if (L > 0) {
    for (const HeadAttention& h : last.layers[L > 1 ? 1 : 0].heads)
      if (std::isfinite(h.attn_to_0_active))
        m.l1_active_attn_to_0 = std::isfinite(m.l1_active_attn_to_0) ? std::max(m.l1_active_attn_to_0, h.attn_to_0_active)
                                                                     : h.attn_to_0_active;
  }
  for (const LayerProbe& lp : last.layers) {
    m.p0_norm_ratio.push_back(lp.state.p0_norm_ratio);
    m.p0_cos.push_back(lp.state.p0_cos);
    m.sink_rate.push_back(lp.sink.sink_rate);
    m.attn_to_0.push_back(lp.sink.attn_to_0);
    m.attn_to_1.push_back(lp.sink.attn_to_1);
  }
  m.emerged_identification = r.emergence.identification;
  m.emerged_high_norm = r.emergence.high_norm;
  m.emerged_sink = r.emergence.sink;
  return m;
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
  std::vector<std::exception_ptr> errors(jobs.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex done_mutex;
  auto worker = [&] {
    for (std::size_t j; (j = next.fetch_add(1)) < jobs.size();) {
      if (failed.load()) break;
      try {
        const Job& job = jobs[j];
        const std::uint64_t seed = derive_seed(base_seed, job.variant->name, static_cast<std::uint64_t>(job.seed_index));
        KeyValues options = variant_options(c, *job.variant);
        set_key(options, "seed", std::to_string(seed));
        const TrainConfig tc = make_train_config(options, "--config");
        const int checkpoint_every = static_cast<int>(parse_int("--config", "checkpoint-every", get(options, "checkpoint-every")));
        if (checkpoint_every < 0) throw UsageError("--config", "key 'checkpoint-every': must be at least 0");
        const fs::path dir = out_dir / "runs" / job.variant->name / ("seed-" + std::to_string(job.seed_index));
        // Every run keeps its final checkpoint: on --resume a finished run's metrics come from it.
        LoadedCheckpoint checkpoint;
        if (resume) checkpoint = load_latest_checkpoint(checkpoint_dir(dir), tc, "--resume");
        const bool finished = checkpoint.found && checkpoint.state.step == tc.steps && fs::exists(dir / "summary.json");
        TrainResult r;
        if (finished) {
          r.probes = checkpoint.state.probes;
          r.emergence = analyse_trace(r.probes, tc.probe, tc.data.task);
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
        if (on_done) {
          std::lock_guard<std::mutex> lock(done_mutex);
          on_done(records[j]);
        }
      } catch (...) {
        errors[j] = std::current_exception();
        failed.store(true);
      }
    }
  };
  const int n_threads = std::max(1, std::min<int>(threads, static_cast<int>(jobs.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n_threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return records;
}

std::string results_csv(const std::vector<RunRecord>& runs) {
  const std::size_t L = max_layers(runs);
  std::ostringstream out;
  out << "variant,seed_index,seed";
  for (const auto& [name, v] : flat_metrics(RunMetrics{}, L)) out << ',' << name;
  out << ",emerged_identification,emerged_high_norm,emerged_sink\n";
  auto step = [](const std::optional<int>& s) { return s ? std::to_string(*s) : std::string(); };
  for (const RunRecord& r : runs) {
    out << r.variant << ',' << r.seed_index << ',' << r.seed;
    for (const auto& [name, v] : flat_metrics(r.metrics, L)) out << ',' << csv_num(v);
    out << ',' << step(r.metrics.emerged_identification) << ',' << step(r.metrics.emerged_high_norm) << ','
        << step(r.metrics.emerged_sink) << '\n';
  }
  return out.str();
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
    const auto names = flat_metrics(RunMetrics{}, L);
    for (std::size_t k = 0; k < names.size(); ++k) {
      std::vector<double> x;
      for (const RunRecord* r : rs) {
        const double val = flat_metrics(r->metrics, L)[k].second;
        if (std::isfinite(val)) x.push_back(val);
      }
      const Interval iv = mean_interval(x, kLevel);
      metrics.push_back({{"metric", names[k].first}, {"n", iv.n}, {"mean", json_num(iv.mean)}, {"lo", json_num(iv.lo)},
                         {"hi", json_num(iv.hi)}});
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
      {"high_norm", "max_l p0_norm_ratio", [&](const RunMetrics& m) { return max_of(m.p0_norm_ratio, 0); },
       [](const RunMetrics& m) { return m.emerged_high_norm.has_value(); }},
      {"sink", "max_{l>=1} sink_rate",
       [&](const RunMetrics& m) { return max_of(m.sink_rate, m.sink_rate.size() > 1 ? 1 : 0); },
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
    j["main"]["mean"] = json_num(im.mean);
    j["control"]["mean"] = json_num(ic.mean);
    bool supported = false;
    if (xm.size() >= 2 && xc.size() >= 2) {
      const WelchResult w = welch_t_test(xm, xc);
      j["t"] = json_num(w.t);
      j["dof"] = json_num(w.dof);
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

}  // namespace p0sim::sim
