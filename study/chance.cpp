#include "study/chance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace p0sim::study {

namespace {
double log_factorial(long n) { return std::lgamma(static_cast<double>(n) + 1.0); }
double log_choose(long n, long k) { return log_factorial(n) - log_factorial(k) - log_factorial(n - k); }

// Ties in the posterior come from tokens with equal counts: in firstrecall their log weights are
// computed by the same operations on the same numbers; in firstrecall-lookup the sums run in
// another order per hypothesis, and true ties were measured to differ by up to 6e-14 at T = 64
// (no near-tie between 1e-12 and 1e-8). The tolerance absorbs both.
constexpr double kTieTolerance = 1e-12;
constexpr double neg_inf = -std::numeric_limits<double>::infinity();

// Log weights (-inf: impossible) to probabilities.
std::vector<double> normalised(const std::vector<double>& logw) {
  double top = neg_inf;
  for (double w : logw) top = std::max(top, w);
  if (top == neg_inf) throw std::invalid_argument("content posterior: no row of the task has these counts");
  std::vector<double> post(logw.size());
  double sum = 0.0;
  for (std::size_t a = 0; a < post.size(); ++a) sum += post[a] = std::exp(logw[a] - top);
  for (double& p : post) p /= sum;
  return post;
}

// Each x_0's log weight (-inf: impossible) and whether under it x_t is the row's first fire. Given
// that x_t is the first, the hypotheses with earlier fires drop out and the others keep their
// weights (their rows all have x_t first), so one set of weights gives both posteriors.
struct Hypotheses {
  std::vector<double> logw;
  std::vector<char> x_t_first;
  explicit Hypotheses(int V) : logw(static_cast<std::size_t>(V), neg_inf), x_t_first(static_cast<std::size_t>(V), 0) {}
  std::vector<double> posterior(bool first) const {
    if (!first) return normalised(logw);
    std::vector<double> w = logw;
    for (std::size_t a = 0; a < w.size(); ++a)
      if (!x_t_first[a]) w[a] = neg_inf;
    return normalised(w);
  }
};
}  // namespace

// Row law (sim/data.cpp, DataGenerator::fill_firstrecall): x_0 is a trigger (uniform among the K
// triggers) with probability q, else a uniform filler (n = V - K of them); each later position not
// holding a copy fires a trigger with probability q, else draws a fresh uniform filler; the
// position after a firing trigger copies x_0. Given that x_t fires, the fires before it are
// followed by their copies within 1..t-1, so with k fires in all, positions 1..t hold k fires,
// k - 1 copies of x_0 and f = t - 2k + 1 fresh fillers, in C(t - k, k - 1) coin patterns of
// probability q^k (1-q)^f each.
//   x_0 = filler a: the multiset's triggers are the k fires (k = its trigger count), a occurs
//     k times as x_0 and copies, the other fillers are fresh.
//   x_0 = trigger g: the triggers are x_0, its k - 1 copies and the k fires (k = half the trigger
//     count); every filler is fresh.
// The weight of each hypothesis is P(x_0) * patterns * q^k (1-q)^f * (fires' identities:
// k! / prod c! * K^-k) * (fresh fillers: f! / prod n! * n^-f) * P(x_t's identity | the fires'), the
// last being (fires with x_t's token) / k, since the fires' order is exchangeable.
namespace {
Hypotheses firstrecall_hypotheses(const std::vector<long>& counts, int t, int trigger, const sim::DataConfig& c) {
  const int V = c.vocab, K = c.triggers, n = V - K;
  const double q = c.trigger_prob;
  if (static_cast<int>(counts.size()) != V)
    throw std::invalid_argument("content posterior: counts must have vocab entries");
  if (trigger < n || trigger >= V || counts[static_cast<std::size_t>(trigger)] < 1)
    throw std::invalid_argument("content posterior: x_t must be a trigger among the counts");
  const auto last_fire = [&](long fires_of_trigger, long k) {
    return fires_of_trigger > 0 ? std::log(static_cast<double>(fires_of_trigger) / static_cast<double>(k)) : neg_inf;
  };
  long triggers = 0, total = 0;
  double sum_lf_fillers = 0.0, sum_lf_triggers = 0.0;
  for (int a = 0; a < V; ++a) {
    total += counts[static_cast<std::size_t>(a)];
    if (a >= n) {
      triggers += counts[static_cast<std::size_t>(a)];
      sum_lf_triggers += log_factorial(counts[static_cast<std::size_t>(a)]);
    } else {
      sum_lf_fillers += log_factorial(counts[static_cast<std::size_t>(a)]);
    }
  }
  if (total != t + 1) throw std::invalid_argument("content posterior: counts must sum to t + 1");
  Hypotheses h(V);
  // The part of a hypothesis' weight shared by every x_0 of its kind (filler or trigger).
  auto common = [&](long k) {
    const long f = t - 2 * k + 1;
    if (k < 1 || f < 0) return neg_inf;
    return log_choose(t - k, k - 1) + static_cast<double>(k) * std::log(q) + static_cast<double>(f) * std::log1p(-q) -
           static_cast<double>(k) * std::log(static_cast<double>(K)) + log_factorial(k) -
           static_cast<double>(f) * std::log(static_cast<double>(n)) + log_factorial(f);
  };
  // x_t is the row's first fire under the hypotheses with k = 1
  const double filler_common = common(triggers);
  if (filler_common > neg_inf)
    for (int a = 0; a < n; ++a) {
      const long na = counts[static_cast<std::size_t>(a)];
      if (na < triggers) continue;
      h.x_t_first[static_cast<std::size_t>(a)] = triggers == 1;
      h.logw[static_cast<std::size_t>(a)] = std::log1p(-q) - std::log(static_cast<double>(n)) + filler_common -
                                            sum_lf_triggers -
                                            (sum_lf_fillers - log_factorial(na) + log_factorial(na - triggers)) +
                                            last_fire(counts[static_cast<std::size_t>(trigger)], triggers);
    }
  const double trigger_common = triggers % 2 == 0 ? common(triggers / 2) : neg_inf;
  if (trigger_common > neg_inf)
    for (int g = n; g < V; ++g) {
      const long cg = counts[static_cast<std::size_t>(g)], k = triggers / 2;
      if (cg < k) continue;
      h.x_t_first[static_cast<std::size_t>(g)] = k == 1;
      h.logw[static_cast<std::size_t>(g)] =
          std::log(q) - std::log(static_cast<double>(K)) + trigger_common - sum_lf_fillers -
          (sum_lf_triggers - log_factorial(cg) + log_factorial(cg - k)) +
          last_fire(counts[static_cast<std::size_t>(trigger)] - (g == trigger ? k : 0), k);
    }
  return h;
}
}  // namespace

std::vector<double> firstrecall_content_posterior(const std::vector<long>& counts, int t, int trigger,
                                                  const sim::DataConfig& c, bool first) {
  return firstrecall_hypotheses(counts, t, trigger, c).posterior(first);
}

namespace {
// The number of distinct orders of lookup's key units (facts, and queries with their answers) that
// the row law can produce from the given counts, starting from memory `mem` (-1: no fact yet).
// A fact (k, v) sets key k's memory to v; a query of key k is followed by key k's memory (none
// when unset), which must be one of the remaining answers. Memoised on the whole state.
class KeyUnitOrders {
 public:
  KeyUnitOrders(int keys, int values) : K_(keys), Nv_(values) {}
  // facts[k*Nv + v], queries[k], answers[v] (answers[Nv] = none), mem[k]
  double count(std::vector<int>& facts, std::vector<int>& queries, std::vector<int>& answers, std::vector<int>& mem) {
    std::vector<int> key;
    for (const std::vector<int>* part : {&facts, &queries, &answers, &mem})
      key.insert(key.end(), part->begin(), part->end());
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    double n = 0.0;
    bool empty = true;
    for (int k = 0; k < K_; ++k) {
      for (int v = 0; v < Nv_; ++v) {
        int& f = facts[static_cast<std::size_t>(k * Nv_ + v)];
        if (f == 0) continue;
        empty = false;
        const int before = mem[static_cast<std::size_t>(k)];
        --f;
        mem[static_cast<std::size_t>(k)] = v;
        n += count(facts, queries, answers, mem);
        mem[static_cast<std::size_t>(k)] = before;
        ++f;
      }
      int& q = queries[static_cast<std::size_t>(k)];
      if (q == 0) continue;
      empty = false;
      const int m = mem[static_cast<std::size_t>(k)];
      int& a = answers[static_cast<std::size_t>(m < 0 ? Nv_ : m)];
      if (a == 0) continue;
      --q;
      --a;
      n += count(facts, queries, answers, mem);
      ++a;
      ++q;
    }
    if (empty) n = 1.0;  // every answer was consumed: the caller matched their number to the queries'
    memo_.emplace(std::move(key), n);
    return n;
  }

 private:
  int K_, Nv_;
  std::map<std::vector<int>, double> memo_;
};
}  // namespace

// Row law of firstrecall-lookup (sim/data.cpp, DataGenerator::fill_lookup): every fresh position,
// x_0 included, draws from one law (gen.marginal(): a fact, a query, a trigger or a filler); a
// query is followed by its answer, a trigger at t >= 1 fires and is followed by a copy of x_0. So a
// row up to a firing trigger t is a sequence of units — x_0's own, fillers, (trigger, copy)
// pairs, facts and (query, answer) pairs — that parses uniquely once x_0 is known, and its
// probability is the product of its fresh tokens' probabilities. Under the hypothesis x_0 = a:
//   the triggers among x_1..x_{t-1} are the pairs' (a trigger x_0 adds itself and its copies),
//   which fixes the number of copies of a to remove; the rest, F, is the fresh multiset;
//   P(x_0 = a, prefix multiset, x_t) = p(a) * prod_{u in F} p(u) * #orders,
//   #orders = U! / (prod filler multiplicities! * prod trigger multiplicities! * keyed!) * S,
// with U the units after x_0, keyed the facts and queries among them, and S the number of orders
// of those keyed units whose answers are the ones in F (KeyUnitOrders), from x_0's memory.
namespace {
// log_p: the log of gen.marginal(), the fresh-position law
Hypotheses firstrecall_lookup_hypotheses(const std::vector<long>& counts, int trigger, const sim::DataGenerator& gen,
                                         const std::vector<double>& log_p) {
  const sim::DataConfig& c = gen.config();
  const int V = c.vocab, K = c.keys, Nv = c.values, none = gen.lookup_none();
  const int first_trigger = V - c.triggers;
  if (c.task != sim::Task::firstrecall_lookup)
    throw std::invalid_argument("content posterior: the generator must be firstrecall-lookup's");
  if (static_cast<int>(counts.size()) != V)
    throw std::invalid_argument("content posterior: counts must have vocab entries");
  if (trigger < first_trigger || trigger >= V || counts[static_cast<std::size_t>(trigger)] < 1)
    throw std::invalid_argument("content posterior: x_t must be a trigger among the counts");
  std::vector<long> prefix = counts;  // x_0..x_{t-1}
  --prefix[static_cast<std::size_t>(trigger)];
  long triggers = 0;
  for (int g = first_trigger; g < V; ++g) triggers += prefix[static_cast<std::size_t>(g)];
  Hypotheses h(V);
  KeyUnitOrders orders(K, Nv);
  std::vector<int> facts(static_cast<std::size_t>(K * Nv)), queries(static_cast<std::size_t>(K)),
      answers(static_cast<std::size_t>(Nv + 1)), mem(static_cast<std::size_t>(K));
  for (int a = Nv; a < V; ++a) {  // tokens below Nv are answers, never at position 0
    if (a == none || prefix[static_cast<std::size_t>(a)] < 1) continue;
    const bool a_trigger = a >= first_trigger;
    if (a_trigger && triggers % 2 == 0) continue;
    const long pairs = a_trigger ? (triggers - 1) / 2 : triggers;
    std::vector<long> fresh = prefix;
    fresh[static_cast<std::size_t>(a)] -= 1 + pairs;
    if (a >= gen.lookup_query(0) && a < none) --fresh[static_cast<std::size_t>(none)];  // x_1 answers x_0
    if (fresh[static_cast<std::size_t>(a)] < 0 || fresh[static_cast<std::size_t>(none)] < 0) continue;
    double lw = log_p[static_cast<std::size_t>(a)];
    for (std::vector<int>* part : {&facts, &queries, &answers}) std::fill(part->begin(), part->end(), 0);
    long units = 0, keyed = 0, query_count = 0, answer_count = 0;
    std::fill(mem.begin(), mem.end(), -1);
    if (a >= Nv && a < gen.lookup_query(0))  // x_0 = fact (k, v), token Nv + k*Nv + v: key k starts at v
      mem[static_cast<std::size_t>((a - Nv) / Nv)] = (a - Nv) % Nv;
    for (int u = 0; u < V; ++u) {
      const long m = fresh[static_cast<std::size_t>(u)];
      if (u < Nv || u == none) {
        answers[static_cast<std::size_t>(u < Nv ? u : Nv)] = static_cast<int>(m);
        answer_count += m;
        continue;
      }
      if (m == 0) continue;
      lw += static_cast<double>(m) * log_p[static_cast<std::size_t>(u)];
      units += m;
      if (u < gen.lookup_query(0)) {
        facts[static_cast<std::size_t>(u - Nv)] = static_cast<int>(m);
        keyed += m;
      } else if (u < none) {
        queries[static_cast<std::size_t>(u - gen.lookup_query(0))] = static_cast<int>(m);
        keyed += m;
        query_count += m;
      } else {
        lw -= log_factorial(m);  // fillers and the pairs' triggers: orders among equal tokens
      }
    }
    if (answer_count != query_count) continue;
    const double keyed_orders = orders.count(facts, queries, answers, mem);
    if (keyed_orders == 0.0) continue;
    h.x_t_first[static_cast<std::size_t>(a)] = pairs == 0;  // no (trigger, copy) pair before x_t
    h.logw[static_cast<std::size_t>(a)] = lw + log_factorial(units) - log_factorial(keyed) + std::log(keyed_orders);
  }
  return h;
}

std::vector<double> log_of(std::vector<double> p) {
  for (double& x : p) x = std::log(x);
  return p;
}
}  // namespace

std::vector<double> firstrecall_lookup_content_posterior(const std::vector<long>& counts, int trigger,
                                                         const sim::DataGenerator& gen, bool first) {
  return firstrecall_lookup_hypotheses(counts, trigger, gen, log_of(gen.marginal())).posterior(first);
}

bool has_content_posterior(const sim::DataConfig& c) {
  return (c.task == sim::Task::firstrecall && c.filler == sim::Filler::uniform) ||
         (c.task == sim::Task::firstrecall_lookup && c.seq_len <= kLookupChanceMaxT);
}

ContentOnlyChance content_only_chance(const sim::DataConfig& c, long rows) {
  if (!has_content_posterior(c))
    throw std::invalid_argument(
        "the content-only chance level is computed for firstrecall with uniform fillers and for firstrecall-lookup "
        "up to seq-len " +
        std::to_string(kLookupChanceMaxT) + " only");
  const sim::DataGenerator gen(c);
  const int N = gen.row_length(), T = c.seq_len;
  constexpr int kBatch = 256;
  std::vector<std::int32_t> x(static_cast<std::size_t>(kBatch) * N);
  std::vector<sim::Kind> kind(static_cast<std::size_t>(kBatch) * T);
  std::vector<long> counts(static_cast<std::size_t>(c.vocab));
  const std::vector<double> log_p = log_of(gen.marginal());
  ContentOnlyChance out;
  double first_sum = 0.0, sum = 0.0;
  for (long done = 0, batch = 0; done < rows; ++batch) {
    const int b = static_cast<int>(std::min<long>(kBatch, rows - done));
    gen.fill(kChanceStream, static_cast<std::uint64_t>(batch), b, x.data(), kind.data());
    for (int r = 0; r < b; ++r) {
      const std::int32_t* row = &x[static_cast<std::size_t>(r) * N];
      std::fill(counts.begin(), counts.end(), 0L);
      for (int t = 0; t < T; ++t) {
        ++counts[static_cast<std::size_t>(row[t])];
        const sim::Kind k = kind[static_cast<std::size_t>(r) * T + t];
        if (k != sim::Kind::first && k != sim::Kind::active) continue;
        // The best guess from x_t and the multiset, scored over every trigger; at a first trigger
        // also the best guess of an observer told that it is the first (a rule for first
        // triggers alone may trade the later ones away, so this is the bound there).
        const Hypotheses h = c.task == sim::Task::firstrecall
                                 ? firstrecall_hypotheses(counts, t, row[t], c)
                                 : firstrecall_lookup_hypotheses(counts, row[t], gen, log_p);
        const auto hit_of = [&](bool first) {
          const std::vector<double> post = h.posterior(first);
          const double best = *std::max_element(post.begin(), post.end());
          int ties = 0;
          for (double p : post) ties += p >= best * (1.0 - kTieTolerance);
          return post[static_cast<std::size_t>(row[0])] >= best * (1.0 - kTieTolerance) ? 1.0 / ties : 0.0;
        };
        sum += hit_of(false);
        ++out.queries;
        if (k == sim::Kind::first) {
          first_sum += hit_of(true);
          ++out.first_queries;
        }
      }
    }
    done += b;
  }
  out.rows = rows;
  out.trigger_accuracy = out.queries > 0 ? sum / static_cast<double>(out.queries) : std::nan("");
  out.first_trigger_accuracy =
      out.first_queries > 0 ? first_sum / static_cast<double>(out.first_queries) : std::nan("");
  return out;
}

std::optional<ContentOnlyChance> control_chance(const ExperimentConfig& c) {
  for (const ExperimentVariant& v : c.variants) {
    if (v.name != c.control) continue;
    const sim::TrainConfig t = make_train_config(variant_options(c, v), "--config");
    const bool content_only =
        t.model.mask == sim::Mask::prefix_bidirectional && t.model.pos == sim::PosEnc::none && !t.model.bos;
    if (!content_only || !has_content_posterior(t.data)) return std::nullopt;
    return content_only_chance(t.data, kChanceRows);
  }
  return std::nullopt;
}

}  // namespace p0sim::study
