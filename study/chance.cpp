#include "study/chance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace p0sim::study {

namespace {
double log_factorial(long n) { return std::lgamma(static_cast<double>(n) + 1.0); }
double log_choose(long n, long k) { return log_factorial(n) - log_factorial(k) - log_factorial(n - k); }

// Ties in the posterior come from tokens with equal counts, whose log weights are computed by the
// same operations on the same numbers; the tolerance only absorbs the rounding of the
// normalisation.
constexpr double kTieTolerance = 1e-12;
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
// k! / prod c! * K^-k) * (fresh fillers: f! / prod n! * n^-f).
std::vector<double> firstrecall_content_posterior(const std::vector<long>& counts, int t, const sim::DataConfig& c) {
  const int V = c.vocab, K = c.triggers, n = V - K;
  const double q = c.trigger_prob;
  if (static_cast<int>(counts.size()) != V)
    throw std::invalid_argument("content posterior: counts must have vocab entries");
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
  const double neg = -std::numeric_limits<double>::infinity();
  std::vector<double> logw(static_cast<std::size_t>(V), neg);
  // The part of a hypothesis' weight shared by every x_0 of its kind (filler or trigger).
  auto common = [&](long k) {
    const long f = t - 2 * k + 1;
    if (k < 1 || f < 0) return neg;
    return log_choose(t - k, k - 1) + static_cast<double>(k) * std::log(q) + static_cast<double>(f) * std::log1p(-q) -
           static_cast<double>(k) * std::log(static_cast<double>(K)) + log_factorial(k) -
           static_cast<double>(f) * std::log(static_cast<double>(n)) + log_factorial(f);
  };
  const double filler_common = common(triggers);
  if (filler_common > neg)
    for (int a = 0; a < n; ++a) {
      const long na = counts[static_cast<std::size_t>(a)];
      if (na < triggers) continue;
      logw[static_cast<std::size_t>(a)] = std::log1p(-q) - std::log(static_cast<double>(n)) + filler_common -
                                          sum_lf_triggers -
                                          (sum_lf_fillers - log_factorial(na) + log_factorial(na - triggers));
    }
  const double trigger_common = triggers % 2 == 0 ? common(triggers / 2) : neg;
  if (trigger_common > neg)
    for (int g = n; g < V; ++g) {
      const long cg = counts[static_cast<std::size_t>(g)], k = triggers / 2;
      if (cg < k) continue;
      logw[static_cast<std::size_t>(g)] = std::log(q) - std::log(static_cast<double>(K)) + trigger_common -
                                          sum_lf_fillers -
                                          (sum_lf_triggers - log_factorial(cg) + log_factorial(cg - k));
    }
  double top = neg;
  for (double w : logw) top = std::max(top, w);
  if (top == neg) throw std::invalid_argument("content posterior: no row of the task has these counts");
  std::vector<double> post(static_cast<std::size_t>(V));
  double sum = 0.0;
  for (std::size_t a = 0; a < post.size(); ++a) sum += post[a] = std::exp(logw[a] - top);
  for (double& p : post) p /= sum;
  return post;
}

ContentOnlyChance firstrecall_content_only_chance(const sim::DataConfig& c, long rows) {
  if (c.task != sim::Task::firstrecall || c.filler != sim::Filler::uniform)
    throw std::invalid_argument(
        "the content-only chance level has a closed form for firstrecall with uniform fillers only");
  const sim::DataGenerator gen(c);
  const int N = gen.row_length(), T = c.seq_len;
  constexpr int kBatch = 256;
  std::vector<std::int32_t> x(static_cast<std::size_t>(kBatch) * N);
  std::vector<sim::Kind> kind(static_cast<std::size_t>(kBatch) * T);
  std::vector<long> counts(static_cast<std::size_t>(c.vocab));
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
        const std::vector<double> post = firstrecall_content_posterior(counts, t, c);
        const double best = *std::max_element(post.begin(), post.end());
        int ties = 0;
        for (double p : post) ties += p >= best * (1.0 - kTieTolerance);
        const double hit = post[static_cast<std::size_t>(row[0])] >= best * (1.0 - kTieTolerance) ? 1.0 / ties : 0.0;
        sum += hit;
        ++out.queries;
        if (k == sim::Kind::first) {
          first_sum += hit;
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
    if (!content_only || t.data.task != sim::Task::firstrecall || t.data.filler != sim::Filler::uniform)
      return std::nullopt;
    return firstrecall_content_only_chance(t.data, kChanceRows);
  }
  return std::nullopt;
}

}  // namespace p0sim::study
