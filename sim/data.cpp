#include "sim/data.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "common/errors.hpp"
#include "common/format.hpp"
#include "common/rng.hpp"
#include "sim/corpus.hpp"
#include "sim/corpus_bigrams.hpp"
#include "sim/markov_chain.hpp"

namespace p0sim::sim {

nlohmann::json to_json(const DataConfig& c) {
  nlohmann::json j = {{"task", enum_name(c.task)},
                      {"markov_alpha", c.markov_alpha},
                      {"triggers", c.triggers},
                      {"trigger_prob", c.trigger_prob},
                      {"filler", enum_name(c.filler)},
                      {"keys", c.keys},
                      {"values", c.values}};
  if (c.task == Task::text) {  // only here, so the other tasks' summaries stay as they were
    j["corpus"] = c.corpus;
    j["window"] = enum_name(c.window);
  }
  if (c.bigrams == Bigrams::corpus && (c.task == Task::markov || c.task == Task::backcopy)) {
    j["bigrams"] = enum_name(c.bigrams);
    j["corpus"] = c.corpus;
  }
  return j;
}

DataGenerator::DataGenerator(const DataConfig& config) : config_(config) {
  const int V = config.vocab;
  if (V < 2 || V > (1 << 24)) throw ConfigError("vocab", "must be between 2 and 16777216, got " + std::to_string(V));
  if (config.seq_len < 2) throw ConfigError("seq_len", "must be at least 2, got " + std::to_string(config.seq_len));
  const bool chain = config.task == Task::markov || config.task == Task::backcopy;
  if (chain && !(std::isfinite(config.markov_alpha) && config.markov_alpha >= 1e-3 && config.markov_alpha <= 1e6))
    throw ConfigError("markov_alpha", "must be a finite number in [0.001, 1e6], got " + fmt17(config.markov_alpha));
  if (config.task == Task::backcopy && (config.triggers < 1 || config.triggers >= V))
    throw ConfigError("triggers", "must be between 1 and vocab-1 = " + std::to_string(V - 1) + ", got " +
                                      std::to_string(config.triggers));
  if (chain && V > 4096) throw ConfigError("vocab", "markov and backcopy need a vocab of at most 4096");
  const bool counted = chain && config.bigrams == Bigrams::corpus;
  if (counted && V != kTextVocab)
    throw ConfigError("vocab", "--bigrams corpus counts byte bigrams: vocab must be 256, got " + std::to_string(V));

  const auto Vs = static_cast<std::size_t>(V);
  stationary_.assign(Vs, 1.0 / V);
  if (config.task == Task::text) {
    if (V != kTextVocab)
      throw ConfigError("vocab", "the text task reads bytes: vocab must be 256, got " + std::to_string(V));
    corpus_ = load_corpus(config.corpus, static_cast<std::size_t>(row_length()));
    stationary_.assign(corpus_->train_frequency.begin(), corpus_->train_frequency.end());
    floor_ = std::numeric_limits<double>::quiet_NaN();  // a real corpus has no closed-form floor
    return;
  }
  if (config.task == Task::firstrecall || config.task == Task::backcopy_indep) {
    init_firstrecall();
    return;
  }
  if (config.task == Task::lookup || config.task == Task::firstrecall_lookup) {
    init_lookup();
    return;
  }
  if (!chain) {
    floor_ = config.task == Task::uniform ? std::log(static_cast<double>(V)) : 0.0;
    return;
  }

  // The task's structure comes from the config seed alone (or the corpus), never from the data streams.
  PhiloxStream rng(derive_seed(config.seed, "markov-transition", 0), 0);
  if (counted) {
    const auto corpus = load_corpus(config.corpus, static_cast<std::size_t>(row_length()));
    stationary_.assign(corpus->train_frequency.begin(), corpus->train_frequency.end());
    transition_ = count_bigrams(*corpus);
  } else {
    transition_ = dirichlet_bigrams(rng, V, config.markov_alpha);
  }
  row_cdf_.resize(Vs * Vs);
  for (std::size_t i = 0; i < Vs; ++i) cumulate(&transition_[i * Vs], V, &row_cdf_[i * Vs]);

  std::vector<double> row_entropy(Vs);
  for (std::size_t i = 0; i < Vs; ++i) row_entropy[i] = entropy_of(&transition_[i * Vs], V);

  if (config.task == Task::markov) {
    stationary_ = stationary_of(transition_, V);
    start_cdf_.resize(Vs);
    cumulate(stationary_.data(), V, start_cdf_.data());
    floor_ = 0.0;
    for (std::size_t i = 0; i < Vs; ++i) floor_ += stationary_[i] * row_entropy[i];
    return;
  }

  // backcopy: k distinct trigger tokens by a partial Fisher-Yates shuffle, or with counted bigrams
  // the k most frequent bytes (ties to the lower byte), as Guo et al. choose theirs.
  PhiloxStream trig_rng(derive_seed(config.seed, "backcopy-triggers", 0), 0);
  std::vector<int> perm(Vs);
  std::iota(perm.begin(), perm.end(), 0);
  if (counted) {
    std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) {
      return stationary_[static_cast<std::size_t>(a)] > stationary_[static_cast<std::size_t>(b)];
    });
  } else {
    for (int i = 0; i < config.triggers; ++i)
      std::swap(perm[static_cast<std::size_t>(i)],
                perm[static_cast<std::size_t>(i) + trig_rng.below(static_cast<std::uint32_t>(V - i))]);
  }
  is_trigger_.assign(Vs, 0);
  for (int i = 0; i < config.triggers; ++i)
    is_trigger_[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])] = 1;
  if (counted) {
    for (const std::size_t a : untrap(transition_, is_trigger_, stationary_)) {  // still the unigram law here
      cumulate(&transition_[a * Vs], V, &row_cdf_[a * Vs]);
      row_entropy[a] = entropy_of(&transition_[a * Vs], V);
    }
  }

  const std::vector<double> pair = backcopy_pair_law(transition_, is_trigger_, V);  // (x_{-1}, x_0)
  start_cdf_.resize(Vs * Vs);
  cumulate(pair.data(), V * V, start_cdf_.data());
  for (std::size_t c = 0; c < Vs; ++c) {
    double m = 0.0;
    for (std::size_t a = 0; a < Vs; ++a) m += pair[a * Vs + c];
    stationary_[c] = m;
  }
  // Bayes-optimal loss: after a trigger at t >= 1 the next token is certain; after a non-trigger c
  // it costs H(P(c,.)). Only the prediction from position 0 alone differs: after a trigger there,
  // the copied token x_{-1} is unseen and costs H(x_{-1} | x_0 = trigger).
  floor_ = 0.0;
  for (std::size_t a = 0; a < Vs; ++a)
    if (!is_trigger_[a]) floor_ += stationary_[a] * row_entropy[a];
  first_extra_ = 0.0;
  std::vector<double> cond(Vs);
  for (std::size_t g = 0; g < Vs; ++g) {
    if (!is_trigger_[g] || stationary_[g] <= 0.0) continue;
    for (std::size_t a = 0; a < Vs; ++a) cond[a] = pair[a * Vs + g] / stationary_[g];
    first_extra_ += stationary_[g] * entropy_of(cond.data(), V);
  }
}

// firstrecall. Fillers are the tokens 0..V-k-1, triggers V-k..V-1. Row law:
//   x_0 = a trigger (uniform among the k) with probability q, else a filler from the filler
//   chain's stationary law f (uniform, or the Dirichlet bigram chain's);
//   for t >= 1: if x_{t-1} was an *inserted* trigger (t-1 >= 1), x_t = x_0 (a copy, which never
//   fires itself); else a trigger with probability q (inserted: it fires), else the next filler of
//   the filler chain, which continues from the last fresh filler (from x_0 if it is a filler, else
//   from an unseen stationary draw).
// A trigger at position 0 is an ordinary token, not an inserted trigger: it does not fire (x_1 is
// fresh), and later triggers copy it like any x_0. Were it to fire, whether x_1 is a copy would
// depend on x_0's value and position 1 would see triggers with probability q + (1-q)q. As it is,
// whether x_t (t >= 1) is a copy depends only on coins independent of x_0, a copy has x_0's law and
// a fresh token has law m = q * uniform(triggers) + (1 - q) * f, which is also x_0's law: every
// position has the marginal m, so position 0 carries no position information in its marginal.
// backcopy-indep has the same law except that the token after an inserted trigger at t copies
// x_{t-1} instead of x_0; its copies are (almost always) fillers, so positions differ slightly in
// marginal, and marginal() returns the law m of a fresh position.
void DataGenerator::init_firstrecall() {
  const DataConfig& c = config_;
  const int V = c.vocab;
  if (c.triggers < 1 || c.triggers >= V)
    throw ConfigError(
        "triggers", "must be between 1 and vocab-1 = " + std::to_string(V - 1) + ", got " + std::to_string(c.triggers));
  if (!(c.trigger_prob > 0.0 && c.trigger_prob < 1.0))
    throw ConfigError("trigger_prob",
                      enum_name(c.task) + " needs a probability in (0, 1), got " + fmt17(c.trigger_prob));
  const bool markov = c.filler == Filler::markov;
  if (markov && !(std::isfinite(c.markov_alpha) && c.markov_alpha >= 1e-3 && c.markov_alpha <= 1e6))
    throw ConfigError("markov_alpha", "must be a finite number in [0.001, 1e6], got " + fmt17(c.markov_alpha));
  const int n = V - c.triggers;
  if (markov && n > 4096) throw ConfigError("vocab", "a markov filler needs at most 4096 filler tokens");
  const auto Vs = static_cast<std::size_t>(V), ns = static_cast<std::size_t>(n);
  is_trigger_.assign(Vs, 0);
  fillers_.resize(ns);
  for (int i = 0; i < V; ++i) {
    if (i >= n)
      is_trigger_[static_cast<std::size_t>(i)] = 1;
    else
      fillers_[static_cast<std::size_t>(i)] = i;
  }
  std::vector<double> f(ns, 1.0 / n);
  if (markov) {
    PhiloxStream rng(derive_seed(c.seed, "firstrecall-filler", 0), 0);
    const std::vector<double> P = dirichlet_bigrams(rng, n, c.markov_alpha);
    f = stationary_of(P, n);
    filler_cdf_.resize(ns * ns);
    for (std::size_t i = 0; i < ns; ++i) cumulate(&P[i * ns], n, &filler_cdf_[i * ns]);
  }
  filler_start_cdf_.resize(ns);
  cumulate(f.data(), n, filler_start_cdf_.data());
  for (std::size_t i = 0; i < Vs; ++i)
    stationary_[i] = is_trigger_[i] ? c.trigger_prob / c.triggers : (1.0 - c.trigger_prob) * f[i];
  floor_ = std::numeric_limits<double>::quiet_NaN();
}

// lookup (layout in data.hpp). Row law: at every position not right after a query, a fact (k, v)
// (k, v uniform) with probability q, a query q(k) (k uniform) with probability q, else a uniform
// filler; right after q(k) comes the value of the latest fact with key k in the row, or none.
// Position 0 has the law of every position that does not follow a query.
// firstrecall-lookup takes its k triggers from the top of the filler range and adds a third
// branch (probability q) at fresh positions: an inserted trigger, followed by a copy of x_0 as in
// firstrecall (a trigger at position 0 does not fire, a query there does, as in lookup). Answer tokens (values,
// none) occur only after queries and the chance of none falls as facts accumulate, so no position
// t >= 1 has a marginal independent of t; position 0 is as uninformative as the task allows.
void DataGenerator::init_lookup() {
  const DataConfig& c = config_;
  const int V = c.vocab;
  if (c.keys < 1) throw ConfigError("keys", "must be at least 1, got " + std::to_string(c.keys));
  if (c.values < 1) throw ConfigError("values", "must be at least 1, got " + std::to_string(c.values));
  const bool recall = c.task == Task::firstrecall_lookup;
  const int triggers = recall ? c.triggers : 0;
  if (recall && c.triggers < 1) throw ConfigError("triggers", "must be at least 1, got " + std::to_string(c.triggers));
  const long need = static_cast<long>(c.values) * (1 + c.keys) + c.keys + 2 + triggers;
  if (V < need)
    throw ConfigError("vocab", enum_name(c.task) + " with " + std::to_string(c.keys) + " keys and " +
                                   std::to_string(c.values) + " values needs a vocab of at least " +
                                   (recall ? "values*(1+keys)+keys+2+triggers = " : "values*(1+keys)+keys+2 = ") +
                                   std::to_string(need) + ", got " + std::to_string(V));
  const double max_q = recall ? 1.0 / 3.0 : 0.5;
  if (!(c.trigger_prob > 0.0 && c.trigger_prob <= max_q))
    throw ConfigError("trigger_prob", enum_name(c.task) + " needs a probability in (0, " + (recall ? "1/3" : "0.5") +
                                          "], got " + fmt17(c.trigger_prob));
  floor_ = std::numeric_limits<double>::quiet_NaN();
  // The marginal depends on t (see above); stationary_ keeps the fresh-position law.
  const double q = c.trigger_prob;
  const int fillers = V - lookup_none() - 1 - triggers;
  std::fill(stationary_.begin(), stationary_.end(), 0.0);
  for (int k = 0; k < c.keys; ++k) {
    for (int v = 0; v < c.values; ++v)
      stationary_[static_cast<std::size_t>(lookup_fact(k, v))] = q / (c.keys * c.values);
    stationary_[static_cast<std::size_t>(lookup_query(k))] = q / c.keys;
  }
  const double fresh_filler = recall ? 1.0 - 3.0 * q : 1.0 - 2.0 * q;
  for (int i = lookup_none() + 1; i < V - triggers; ++i)
    stationary_[static_cast<std::size_t>(i)] = fresh_filler / fillers;
  // firstrecall-lookup: the top `triggers` tokens are firstrecall's triggers (law q, uniform).
  is_trigger_.assign(static_cast<std::size_t>(recall ? V : 0), 0);
  for (int i = V - triggers; i < V; ++i) {
    is_trigger_[static_cast<std::size_t>(i)] = 1;
    stationary_[static_cast<std::size_t>(i)] = q / triggers;
  }
}

void DataGenerator::fill_firstrecall(PhiloxStream& rng, std::int32_t* x, Kind* kind) const {
  const int N = row_length();
  const int n = static_cast<int>(fillers_.size());
  const double q = config_.trigger_prob;
  const bool markov = config_.filler == Filler::markov;
  const auto ns = static_cast<std::size_t>(n);
  auto trigger = [&] {
    return static_cast<std::int32_t>(n + static_cast<int>(rng.below(static_cast<std::uint32_t>(config_.triggers))));
  };
  auto stationary_filler = [&] {
    return markov ? sample_cdf(filler_start_cdf_.data(), n, rng.uniform())
                  : static_cast<int>(rng.below(static_cast<std::uint32_t>(n)));
  };
  int state = -1;  // last fresh filler (markov)
  auto next_filler = [&] {
    if (!markov) return stationary_filler();
    if (state < 0) state = stationary_filler();  // unseen start when x_0 is a trigger
    state = sample_cdf(&filler_cdf_[static_cast<std::size_t>(state) * ns], n, rng.uniform());
    return state;
  };
  if (rng.uniform() < q) {
    x[0] = trigger();
  } else {
    x[0] = stationary_filler();
    state = x[0];
  }
  const bool copy_previous = config_.task == Task::backcopy_indep;
  bool fired = false;  // x_{t-1} was an inserted trigger (position 0 never is)
  bool seen_first = false;
  if (kind) std::fill(kind, kind + (N - 1), Kind::none);
  for (int t = 1; t < N; ++t) {
    if (fired) {
      x[t] = copy_previous ? x[t - 2] : x[0];
      fired = false;
      continue;
    }
    fired = rng.uniform() < q;
    x[t] = fired ? trigger() : next_filler();
    if (fired && kind && t < N - 1) {
      // backcopy-indep has no "first" trigger: its copy source is never position 0 alone.
      kind[t] = seen_first || copy_previous ? Kind::active : Kind::first;
      seen_first = true;
    }
  }
}

void DataGenerator::fill_lookup(PhiloxStream& rng, std::int32_t* x, Kind* kind) const {
  const int N = row_length();
  const int K = config_.keys, Nv = config_.values, V = config_.vocab;
  const double q = config_.trigger_prob;
  const bool recall = config_.task == Task::firstrecall_lookup;
  const int triggers = recall ? config_.triggers : 0;
  const int first_filler = lookup_none() + 1;
  int memory[64];
  std::vector<int> big;  // only when K > 64
  int* mem = memory;
  if (K > 64) {
    big.resize(static_cast<std::size_t>(K));
    mem = big.data();
  }
  std::fill(mem, mem + K, -1);
  if (kind) std::fill(kind, kind + (N - 1), Kind::none);
  int asked = -1;      // key of a query at t-1
  bool fired = false;  // an inserted trigger at t-1 (firstrecall-lookup)
  bool seen_first = false;
  for (int t = 0; t < N; ++t) {
    if (asked >= 0) {
      x[t] = mem[asked] >= 0 ? mem[asked] : lookup_none();
      asked = -1;
      continue;
    }
    if (fired) {
      x[t] = x[0];
      fired = false;
      continue;
    }
    const double u = rng.uniform();
    if (u < q) {
      const int k = static_cast<int>(rng.below(static_cast<std::uint32_t>(K)));
      const int v = static_cast<int>(rng.below(static_cast<std::uint32_t>(Nv)));
      mem[k] = v;
      x[t] = lookup_fact(k, v);
    } else if (u < 2.0 * q) {
      asked = static_cast<int>(rng.below(static_cast<std::uint32_t>(K)));
      x[t] = lookup_query(asked);
      if (kind && t < N - 1) kind[t] = recall ? Kind::query : Kind::active;
    } else if (recall && u < 3.0 * q) {
      x[t] = V - triggers + static_cast<int>(rng.below(static_cast<std::uint32_t>(triggers)));
      fired = t >= 1;  // a trigger at position 0 is an ordinary token, as in firstrecall
      if (fired && kind && t < N - 1) {
        kind[t] = seen_first ? Kind::active : Kind::first;
        seen_first = true;
      }
    } else {
      x[t] = first_filler + static_cast<int>(rng.below(static_cast<std::uint32_t>(V - triggers - first_filler)));
    }
  }
}

void DataGenerator::fill(std::uint64_t stream, std::uint64_t batch_index, int batch, std::int32_t* rows,
                         Kind* kinds) const {
  const int V = config_.vocab;
  const int N = row_length();
  const auto Vs = static_cast<std::size_t>(V);
  const std::uint64_t stream_seed = derive_seed(config_.seed, "data", stream);
  for (int r = 0; r < batch; ++r) {
    // One counter-based stream per row: row r of batch i never depends on what came before.
    PhiloxStream rng(stream_seed, batch_index * static_cast<std::uint64_t>(batch) + static_cast<std::uint64_t>(r));
    std::int32_t* x = rows + static_cast<std::ptrdiff_t>(r) * N;                      // (T+1)
    Kind* kind = kinds ? kinds + static_cast<std::ptrdiff_t>(r) * (N - 1) : nullptr;  // (T)
    switch (config_.task) {
      case Task::firstrecall:
      case Task::backcopy_indep:
        fill_firstrecall(rng, x, kind);
        continue;
      case Task::lookup:
      case Task::firstrecall_lookup:
        fill_lookup(rng, x, kind);
        continue;
      case Task::text:
        fill_text(stream, rng, x, kind);
        continue;
      case Task::uniform:
        for (int t = 0; t < N; ++t) x[t] = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(V)));
        break;
      case Task::repeat: {
        const auto tok = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(V)));
        std::fill(x, x + N, tok);
        break;
      }
      case Task::markov:
        x[0] = sample_cdf(start_cdf_.data(), V, rng.uniform());
        for (int t = 1; t < N; ++t)
          x[t] = sample_cdf(&row_cdf_[static_cast<std::size_t>(x[t - 1]) * Vs], V, rng.uniform());
        break;
      case Task::backcopy: {
        const int p = sample_cdf(start_cdf_.data(), V * V, rng.uniform());
        std::int32_t prev = p / V;  // x_{-1}: unseen, but what a trigger at position 0 copies
        x[0] = p % V;
        for (int t = 1; t < N; ++t) {
          const std::int32_t cur = x[t - 1];
          x[t] = is_trigger_[static_cast<std::size_t>(cur)]
                     ? prev
                     : sample_cdf(&row_cdf_[static_cast<std::size_t>(cur) * Vs], V, rng.uniform());
          prev = cur;
        }
        break;
      }
      default:
        break;
    }
    if (kind) {
      // Only backcopy scores anything among these: a trigger at t >= 1 announces a copy of x_{t-1}
      // (at t = 0 the copied token is unseen).
      std::fill(kind, kind + (N - 1), Kind::none);
      if (config_.task == Task::backcopy)
        for (int t = 1; t < N - 1; ++t)
          if (is_trigger_[static_cast<std::size_t>(x[t])]) kind[t] = Kind::active;
    }
  }
}

// A window of T+1 bytes of the split: from a uniform byte offset, or from a uniform document's
// first byte (the last documents' starts are moved back so the window fits). Every prediction is
// scored (Kind::active): the task is next-byte prediction everywhere.
void DataGenerator::fill_text(std::uint64_t stream, PhiloxStream& rng, std::int32_t* x, Kind* kind) const {
  const Corpus::Split& split = stream == 0 ? corpus_->train : corpus_->heldout;
  const std::size_t n = static_cast<std::size_t>(row_length()), last = split.bytes.size() - n;
  std::size_t start = 0;
  if (config_.window == TextWindow::random) {
    start = static_cast<std::size_t>(rng.uniform() * static_cast<double>(last + 1));
  } else {
    const auto doc = static_cast<std::size_t>(rng.uniform() * static_cast<double>(split.starts.size()));
    start = split.starts[std::min(doc, split.starts.size() - 1)];
  }
  start = std::min(start, last);
  for (std::size_t t = 0; t < n; ++t) x[t] = static_cast<unsigned char>(split.bytes[start + t]);
  if (kind) std::fill(kind, kind + (n - 1), Kind::active);
}

std::vector<double> DataGenerator::marginal() const { return stationary_; }

double DataGenerator::entropy_floor() const { return floor_ + first_extra_ / static_cast<double>(config_.seq_len); }

double DataGenerator::entropy_floor(bool bos) const {
  if (!bos) return entropy_floor();
  const double T = config_.seq_len;
  return (T * entropy_floor() + entropy_of(stationary_.data(), config_.vocab)) / (T + 1.0);
}

std::vector<double> DataGenerator::transition_row(int a) const {
  const auto V = static_cast<std::size_t>(config_.vocab);
  if (transition_.empty() || a < 0 || static_cast<std::size_t>(a) >= V)
    throw std::out_of_range("transition_row: no bigram row " + std::to_string(a) + " in this task");
  return {transition_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(a) * V),
          transition_.begin() + static_cast<std::ptrdiff_t>((static_cast<std::size_t>(a) + 1) * V)};
}

std::vector<int> DataGenerator::trigger_tokens() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < is_trigger_.size(); ++i)
    if (is_trigger_[i]) out.push_back(static_cast<int>(i));
  return out;
}

}  // namespace p0sim::sim
