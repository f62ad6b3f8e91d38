#include "study/run_options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/enum_names.hpp"
#include "common/errors.hpp"
#include "common/format.hpp"

namespace p0sim::study {

namespace {

using sim::Task;

RunOption integer(std::string name, std::string def, double lo, double hi, std::string help, std::string unit = "") {
  RunOption o;
  o.name = std::move(name);
  o.type = OptionType::integer;
  o.default_text = std::move(def);
  o.min = lo;
  o.max = hi;
  o.help = std::move(help);
  o.unit = std::move(unit);
  return o;
}

RunOption real(std::string name, std::string def, double lo, double hi, std::string help, bool lo_open = false,
               bool hi_open = false) {
  RunOption o = integer(std::move(name), std::move(def), lo, hi, std::move(help));
  o.type = OptionType::real;
  o.min_open = lo_open;
  o.max_open = hi_open;
  return o;
}

RunOption flag(std::string name, std::string help) {
  RunOption o;
  o.name = std::move(name);
  o.type = OptionType::flag;
  o.default_text = "false";
  o.help = std::move(help);
  return o;
}

template <NamedEnum E>
RunOption names(std::string name, E def, std::string help) {
  RunOption o;
  o.name = std::move(name);
  o.type = OptionType::name;
  o.default_text = enum_name(def);
  o.names = enum_names<E>();
  o.help = std::move(help);
  return o;
}

RunOption path(std::string name, std::string def, std::string help) {
  RunOption o;
  o.name = std::move(name);
  o.type = OptionType::path;
  o.default_text = std::move(def);
  o.help = std::move(help);
  return o;
}

RunOption train_only(RunOption o) {
  o.scope = kTrainOnly;
  return o;
}

RunOption not_fingerprinted(RunOption o) {
  o.fingerprint = false;
  return o;
}

constexpr double kBillion = 1000000000;

std::vector<RunOption> make_table() {
  std::vector<RunOption> t = {
      integer("vocab", "64", 2, 1 << 20, "Vocabulary size V (tokens 0..V-1)", "tokens"),
      integer("d-model", "64", 1, 1 << 16, "Model width C"),
      integer("heads", "4", 1, 1 << 12, "Attention heads H (C divisible by H)"),
      integer("layers", "2", 1, 256, "Transformer blocks L"),
      integer("d-ff", "0", 0, 1 << 20, "MLP width F (0 = 4 * d-model)"),
      integer("seq-len", "32", 2, 1 << 16, "Input tokens per row T (rows hold T+1 tokens)", "tokens"),
      integer("batch", "32", 1, 1 << 16, "Rows per step B", "rows"),
      names("task", Task::markov, "Synthetic task"),
      real("markov-alpha", "0.1", 1e-3, 1e6,
           "Dirichlet concentration of the bigram rows (markov, backcopy, firstrecall --filler markov)"),
      integer("triggers", "4", 1, 1 << 20,
              "Trigger tokens k of backcopy, backcopy-indep, firstrecall and firstrecall-lookup (1 <= k < V)"),
      real("trigger-prob", "0.1", 0, 1,
           "firstrecall, backcopy-indep: trigger insertion probability per position, in (0, 1); lookup: "
           "probability of a fact and of a query, in (0, 0.5]; firstrecall-lookup: of a fact, a query and a "
           "trigger, in (0, 1/3]",
           true, true),
      names("filler", sim::Filler::uniform,
            "firstrecall, backcopy-indep: filler tokens i.i.d. uniform, or a bigram chain"),
      names("bigrams", sim::Bigrams::dirichlet,
            "markov, backcopy: bigram rows drawn from Dirichlet(--markov-alpha), or counted from --corpus's "
            "training bytes (vocab 256; backcopy's triggers are the most frequent bytes)"),
      path("corpus", "/usr/share/games/fortunes",
           "text, --bigrams corpus: a corpus file, or a directory of them (every 10th document held out)"),
      names("window", sim::TextWindow::random,
            "text: windows start at a random byte, or at a document's first byte (with --bos, the control)"),
      integer("keys", "4", 1, 1 << 20, "lookup: keys K (vocab >= values*(1+keys)+keys+2)"),
      integer("values", "8", 1, 1 << 20, "lookup: values per key"),
      integer("probe-every", "50", 0, kBillion,
              "Probe metrics (trace.csv, heads.csv) before step 1, every K steps and at the end; 0 = off", "steps"),
      integer("probe-batch", "64", 2, 1 << 16, "Rows of the fixed probe batch (data stream 1)", "rows"),
      not_fingerprinted(
          flag("ablate",
               "At the end, zero- and mean-ablate each layer-0 head and each MLP on the probe batch (ablations.csv)")),
      not_fingerprinted(
          real("emerge-attn", "0.5", 0, 1, "Identification: active-query attention to key 0 at least this")),
      not_fingerprinted(
          real("emerge-accuracy", "0.9", 0, 1, "Identification: firstrecall copy accuracy at least this")),
      not_fingerprinted(real("emerge-ratio", "2", 0, 1e12,
                             "High-norm direction: p0_norm_ratio at least this (with --emerge-cos)", true)),
      not_fingerprinted(
          real("emerge-cos", "0.9", 0, 1, "High-norm direction: p0_cos at least this (with --emerge-ratio)")),
      real("sink-eps", "0.3", 0, 1, "A head sinks when its attention to key 0 exceeds this"),
      integer("steps", "1000", 0, kBillion, "Optimiser steps", "steps"),
      real("lr", "0.001", 0, std::numeric_limits<double>::max(), "Peak learning rate (finite, > 0)", true),
      integer("warmup", "0", 0, kBillion, "Linear warm-up steps", "steps"),
      names("schedule", sim::Schedule::constant, "After warm-up: constant, or cosine down to 0 at --steps"),
      names("optimizer", sim::OptimizerKind::adamw,
            "adamw (torch.optim.AdamW), or sgd (torch.optim.SGD with --momentum, L2 weight decay)"),
      real("weight-decay", "0.1", 0, 10, "Weight decay (adamw: decoupled; sgd: added to the gradient)"),
      names("weight-decay-group", sim::DecayGroup::matrices,
            "What decays: every matrix (embeddings and lm_head too), the matrices but the embeddings, or all "
            "parameters (norm gains and biases too)"),
      real("beta1", "0.9", 0, 1, "adamw beta1, in [0, 1)", false, true),
      real("beta2", "0.95", 0, 1, "adamw beta2, in [0, 1)", false, true),
      real("momentum", "0.9", 0, 1, "sgd momentum, in [0, 1)", false, true),
      real("clip", "1", 0, 1e12, "Global gradient-norm clip (0 = off)"),
      RunOption{},  // seed, below
      names("mask", sim::Mask::causal, "Attention mask"),
      names("attn", sim::Attn::softmax, "Attention normalisation"),
      names("pos", sim::PosEnc::none, "Positional encoding"),
      flag("bos", "Prepend a BOS token (id V) to every row"),
      names("norm", sim::Norm::rms, "Normalisation"),
      names("act", sim::Act::gelu, "MLP activation"),
      names("init", sim::Init::gpt2,
            "Initial weights: gpt2 (N(0, 0.02^2), residual projections scaled down), or torch (PyTorch's "
            "module defaults: embeddings N(0,1), linear weights U(+-1/sqrt(fan_in)))"),
      not_fingerprinted(integer("log-every", "100", 1, kBillion,
                                "Steps between progress lines when stderr is not a terminal", "steps")),
      not_fingerprinted(integer(
          "checkpoint-every", "0", 0, kBillion,
          "Write the whole training state to RUN_DIR/checkpoint/ every N steps and after the last (0 = off)", "steps")),
      train_only(names("warm-start", WarmStart::none,
                       "Initial weights: none (random init), or circuit (the hand-wired P0-Sink circuit of `theory "
                       "circuit`, alpha -1, plus --warm-start-noise); warm_start.json says if training kept it")),
      train_only(real("warm-start-noise", "0.01", 0, 10, "Std of the Gaussian noise added to the warm-start weights")),
  };
  RunOption& seed = *std::find_if(t.begin(), t.end(), [](const RunOption& o) { return o.name.empty(); });
  seed.name = "seed";
  seed.type = OptionType::unsigned64;
  seed.default_text = "1";
  seed.help = "Seed of the initial weights, the task structure and the batches";
  return t;
}

bool parse_long(const std::string& s, long long& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  v = std::strtoll(s.c_str(), &end, 10);
  return *end == '\0' && errno != ERANGE;
}

bool parse_real(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return *end == '\0' && std::isfinite(v);
}

std::string range_text(const RunOption& o) {
  auto bound = [&](double v) {
    if (v >= std::numeric_limits<double>::max()) return std::string("inf");
    return fmt_shortest(v);
  };
  if (o.type == OptionType::integer) return bound(o.min) + ".." + bound(o.max);
  return std::string(o.min_open ? "(" : "[") + bound(o.min) + ", " + bound(o.max) + (o.max_open ? ")" : "]");
}

}  // namespace

std::string RunOption::accepted() const {
  switch (type) {
    case OptionType::integer:
      return "an integer in " + range_text(*this);
    case OptionType::real:
      return max >= std::numeric_limits<double>::max()
                 ? std::string("a finite number ") + (min_open ? "> " : ">= ") + fmt_shortest(min)
                 : "a number in " + range_text(*this);
    case OptionType::unsigned64:
      return "an unsigned integer in 0.." + std::to_string(~std::uint64_t{0});
    case OptionType::flag:
      return "true or false";
    case OptionType::path:
      return "a file or directory path";
    case OptionType::name: {
      std::string out = "one of ";
      for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
      return out;
    }
  }
  return "?";
}

std::string RunOption::check(const std::string& text) const {
  bool ok = false;
  switch (type) {
    case OptionType::integer: {
      long long v = 0;
      ok = parse_long(text, v) && static_cast<double>(v) >= min && static_cast<double>(v) <= max;
      break;
    }
    case OptionType::real: {
      double v = 0;
      ok = parse_real(text, v) && (min_open ? v > min : v >= min) && (max_open ? v < max : v <= max);
      break;
    }
    case OptionType::unsigned64:
      ok = !text.empty() && text.size() <= 20 &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; }) &&
           (text.size() < 20 || text <= "18446744073709551615");
      break;
    case OptionType::flag:
      ok = text == "true" || text == "false";
      break;
    case OptionType::name:
      ok = std::find(names.begin(), names.end(), text) != names.end();
      break;
    case OptionType::path:
      ok = !text.empty() && text.find('\0') == std::string::npos;
      break;
  }
  return ok ? std::string() : "must be " + accepted() + ", got '" + text + "'";
}

const std::vector<RunOption>& run_options() {
  static const std::vector<RunOption> table = make_table();
  return table;
}

const RunOption* find_run_option(std::string_view name) {
  for (const RunOption& o : run_options())
    if (o.name == name) return &o;
  return nullptr;
}

std::string nearest_option(std::string_view name, const std::vector<std::string>& candidates) {
  // Levenshtein distance; a suggestion only when at most a third of the name differs.
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_d = std::max<std::size_t>(1, name.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = distance(name, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string option_for_field(const std::string& field) {
  std::string name = field;
  std::replace(name.begin(), name.end(), '_', '-');
  return "--" + name;
}

UsageError option_error(const ConfigError& e) { return UsageError(option_for_field(e.field), e.message); }

std::string toml_value(const RunOption& o, const std::string& text) {
  if (o.type != OptionType::name && o.type != OptionType::path) return text;
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out.push_back('\\');
    out.push_back(ch);
  }
  return out + "\"";
}

OptionValues::OptionValues() : given_(run_options().size(), false) {
  for (const RunOption& o : run_options()) text_.push_back(o.default_text);
}

void OptionValues::set(const std::string& name, const std::string& text, const std::string& where) {
  const auto& table = run_options();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].name != name) continue;
    const std::string why = table[i].check(text);
    if (!why.empty()) throw UsageError(where, why);
    text_[i] = text;
    given_[i] = true;
    return;
  }
  std::vector<std::string> keys;
  for (const RunOption& o : table) keys.push_back(o.name);
  const std::string near = nearest_option(name, keys);
  throw UsageError(where, "unknown option '" + name + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)"));
}

const std::string& OptionValues::get(const std::string& name) const {
  const auto& table = run_options();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].name == name) return text_[i];
  throw std::logic_error("run options: no option '" + name + "'");
}

bool OptionValues::is_default(const std::string& name) const {
  const auto& table = run_options();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].name == name) return !given_[i];
  throw std::logic_error("run options: no option '" + name + "'");
}

std::string OptionValues::toml(unsigned scope) const {
  std::string out;
  const auto& table = run_options();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].scope & scope) out += table[i].name + " = " + toml_value(table[i], text_[i]) + "\n";
  return out;
}

std::string OptionValues::checkpoint_fingerprint() const {
  nlohmann::json j = nlohmann::json::object();
  const auto& table = run_options();
  for (std::size_t i = 0; i < table.size(); ++i) {
    const RunOption& o = table[i];
    if (!o.fingerprint) continue;
    const std::string& t = text_[i];
    switch (o.type) {
      case OptionType::integer:
        j[o.name] = std::strtoll(t.c_str(), nullptr, 10);
        break;
      case OptionType::real:
        j[o.name] = std::strtod(t.c_str(), nullptr);
        break;
      case OptionType::unsigned64:
        j[o.name] = std::strtoull(t.c_str(), nullptr, 10);
        break;
      case OptionType::flag:
        j[o.name] = t == "true";
        break;
      case OptionType::name:
      case OptionType::path:
        j[o.name] = t;
        break;
    }
  }
  return j.dump();
}

sim::FingerprintCheck OptionValues::checkpoint_fits() const {
  std::string own = checkpoint_fingerprint();
  if (get("schedule") != enum_name(sim::Schedule::constant))
    return [own](const std::string& stored) { return stored == own; };
  return [own](const std::string& stored) {
    if (stored == own) return true;
    nlohmann::json a = nlohmann::json::parse(stored, nullptr, false), b = nlohmann::json::parse(own);
    if (!a.is_object()) return false;
    a.erase("steps");
    b.erase("steps");
    return a == b;
  };
}

void check_steps_extension(const std::string& what, long from, long to, sim::Schedule schedule) {
  if (to < from)
    throw UsageError("--steps", what + " was trained to " + std::to_string(from) +
                                    " steps; --steps extends it (more than " + std::to_string(from) +
                                    "), never shortens it");
  if (to > from && schedule != sim::Schedule::constant)
    throw UsageError("--steps", what +
                                    " has a cosine schedule, whose learning rate at every step depends on --steps: it "
                                    "cannot be extended (train it anew)");
}

RunSpec OptionValues::spec() const {
  auto i = [&](const char* k) { return static_cast<int>(std::strtoll(get(k).c_str(), nullptr, 10)); };
  auto d = [&](const char* k) { return std::strtod(get(k).c_str(), nullptr); };
  auto b = [&](const char* k) { return get(k) == "true"; };
  auto e = [&]<typename E>(const char* k, E) { return *parse_enum<E>(get(k)); };
  RunSpec spec;
  sim::TrainConfig& c = spec.train;
  c.model.vocab = i("vocab");
  c.model.d_model = i("d-model");
  c.model.heads = i("heads");
  c.model.layers = i("layers");
  c.model.d_ff = i("d-ff") > 0 ? i("d-ff") : 4 * c.model.d_model;
  c.model.seq_len = i("seq-len");
  c.model.mask = e("mask", sim::Mask{});
  c.model.attn = e("attn", sim::Attn{});
  c.model.pos = e("pos", sim::PosEnc{});
  c.model.bos = b("bos");
  c.model.norm = e("norm", sim::Norm{});
  c.model.act = e("act", sim::Act{});
  c.init = e("init", sim::Init{});
  c.data.task = e("task", sim::Task{});
  c.data.vocab = c.model.vocab;
  c.data.seq_len = c.model.seq_len;
  c.data.markov_alpha = d("markov-alpha");
  c.data.triggers = i("triggers");
  c.data.trigger_prob = d("trigger-prob");
  c.data.filler = e("filler", sim::Filler{});
  c.data.bigrams = e("bigrams", sim::Bigrams{});
  c.data.corpus = get("corpus");
  c.data.window = e("window", sim::TextWindow{});
  c.data.keys = i("keys");
  c.data.values = i("values");
  c.probe.every = i("probe-every");
  c.probe.batch = i("probe-batch");
  c.probe.emerge_attn = d("emerge-attn");
  c.probe.emerge_accuracy = d("emerge-accuracy");
  c.probe.emerge_ratio = d("emerge-ratio");
  c.probe.emerge_cos = d("emerge-cos");
  c.probe.sink_eps = d("sink-eps");
  c.ablate = b("ablate");
  c.batch = i("batch");
  c.steps = i("steps");
  c.lr = d("lr");
  c.warmup = i("warmup");
  c.schedule = e("schedule", sim::Schedule{});
  c.optim.kind = e("optimizer", sim::OptimizerKind{});
  c.optim.weight_decay = d("weight-decay");
  c.optim.decay_group = e("weight-decay-group", sim::DecayGroup{});
  c.optim.momentum = d("momentum");
  c.optim.beta1 = d("beta1");
  c.optim.beta2 = d("beta2");
  c.clip = d("clip");
  c.seed = std::strtoull(get("seed").c_str(), nullptr, 10);
  c.data.seed = c.seed;
  c.log_every = i("log-every");
  spec.checkpoint_every = i("checkpoint-every");
  spec.warm_start = e("warm-start", WarmStart{});
  spec.warm_start_noise = d("warm-start-noise");
  try {
    sim::validate(c);
  } catch (const ConfigError& e) {
    throw option_error(e);
  }
  return spec;
}

}  // namespace p0sim::study
