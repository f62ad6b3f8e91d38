#include "sim/data.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/errors.hpp"
#include "common/format.hpp"
#include "common/rng.hpp"

namespace p0sim::sim {

std::string to_string(Task t) {
  switch (t) {
    case Task::uniform: return "uniform";
    case Task::markov: return "markov";
    case Task::backcopy: return "backcopy";
    case Task::repeat: return "repeat";
  }
  return "?";
}

namespace {

// Below this a Dirichlet row entry is raised to it (then the row renormalised): every transition
// stays possible, so the chain is irreducible and its stationary law unique, while a sample of
// any realistic size never sees the difference.
constexpr double kMinTransition = 1e-12;

// log of a Gamma(shape, 1) variate. Marsaglia & Tsang (2000) for shape >= 1; for shape < 1 the
// boost Gamma(a) = Gamma(a+1) U^(1/a), kept in logs because U^(1/a) underflows for small a.
double log_gamma_variate(PhiloxStream& rng, double shape) {
  double log_boost = 0.0;
  if (shape < 1.0) {
    log_boost = std::log(rng.uniform()) / shape;
    shape += 1.0;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = rng.normal();
    const double v = std::pow(1.0 + c * x, 3);
    if (v <= 0.0) continue;
    if (std::log(rng.uniform()) < 0.5 * x * x + d - d * v + d * std::log(v)) return std::log(d * v) + log_boost;
  }
}

// Stationary law of a row-stochastic matrix P (n,n): solves pi (P - I) = 0 with sum(pi) = 1.
std::vector<double> stationary_of(const std::vector<double>& P, int n) {
  Eigen::MatrixXd A(n, n);  // (P - I)^T, last equation replaced by the normalisation
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) A(j, i) = P[static_cast<std::size_t>(i) * n + j] - (i == j ? 1.0 : 0.0);
  A.row(n - 1).setOnes();
  Eigen::VectorXd b = Eigen::VectorXd::Zero(n);
  b(n - 1) = 1.0;
  Eigen::VectorXd pi = A.fullPivLu().solve(b);
  std::vector<double> out(static_cast<std::size_t>(n));
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += out[static_cast<std::size_t>(i)] = std::max(pi(i), 0.0);
  for (double& x : out) x /= sum;
  return out;
}

double entropy_of(const double* p, int n) {
  double h = 0.0;
  for (int i = 0; i < n; ++i)
    if (p[i] > 0.0) h -= p[i] * std::log(p[i]);
  return h;
}

void cumulate(const double* p, int n, double* cdf) {
  double acc = 0.0;
  for (int i = 0; i < n; ++i) cdf[i] = acc += p[i];
  for (int i = 0; i < n; ++i) cdf[i] /= acc;  // the last entry is exactly 1: u < 1 always lands
}

int sample_cdf(const double* cdf, int n, double u) {
  const double* it = std::upper_bound(cdf, cdf + n, u);
  return static_cast<int>(std::min<std::ptrdiff_t>(it - cdf, n - 1));
}

}  // namespace

DataGenerator::DataGenerator(const DataConfig& config) : config_(config) {
  const int V = config.vocab;
  if (V < 2 || V > (1 << 24)) throw UsageError("--vocab", "must be between 2 and 16777216, got " + std::to_string(V));
  if (config.seq_len < 2) throw UsageError("--seq-len", "must be at least 2, got " + std::to_string(config.seq_len));
  const bool chain = config.task == Task::markov || config.task == Task::backcopy;
  if (chain && !(std::isfinite(config.markov_alpha) && config.markov_alpha >= 1e-3 && config.markov_alpha <= 1e6))
    throw UsageError("--markov-alpha", "must be a finite number in [0.001, 1e6], got " + fmt17(config.markov_alpha));
  if (config.task == Task::backcopy && (config.triggers < 1 || config.triggers >= V))
    throw UsageError("--triggers", "must be between 1 and vocab-1 = " + std::to_string(V - 1) + ", got " +
                                       std::to_string(config.triggers));
  if (chain && V > 4096) throw UsageError("--vocab", "markov and backcopy need a vocab of at most 4096");

  const auto Vs = static_cast<std::size_t>(V);
  stationary_.assign(Vs, 1.0 / V);
  if (!chain) {
    floor_ = config.task == Task::uniform ? std::log(static_cast<double>(V)) : 0.0;
    return;
  }

  // The task's structure comes from the config seed alone, never from the data streams.
  PhiloxStream rng(derive_seed(config.seed, "markov-transition", 0), 0);
  transition_.resize(Vs * Vs);
  std::vector<double> logg(Vs);
  for (int i = 0; i < V; ++i) {
    for (auto& g : logg) g = log_gamma_variate(rng, config.markov_alpha);
    const double top = *std::max_element(logg.begin(), logg.end());
    double* row = &transition_[static_cast<std::size_t>(i) * Vs];
    double sum = 0.0;
    for (int j = 0; j < V; ++j) sum += row[j] = std::exp(logg[static_cast<std::size_t>(j)] - top);
    double sum2 = 0.0;
    for (int j = 0; j < V; ++j) sum2 += row[j] = std::max(row[j] / sum, kMinTransition);
    for (int j = 0; j < V; ++j) row[j] /= sum2;
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

  // backcopy: k distinct trigger tokens by a partial Fisher-Yates shuffle.
  PhiloxStream trig_rng(derive_seed(config.seed, "backcopy-triggers", 0), 0);
  std::vector<int> perm(Vs);
  std::iota(perm.begin(), perm.end(), 0);
  for (int i = 0; i < config.triggers; ++i)
    std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(i) + trig_rng.below(static_cast<std::uint32_t>(V - i))]);
  is_trigger_.assign(Vs, 0);
  for (int i = 0; i < config.triggers; ++i) is_trigger_[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])] = 1;

  // The process is a Markov chain on pairs (x_{t-1}, x_t). Watch it only at non-trigger tokens a:
  // the next step either moves to a non-trigger c (prob P(a,c)) or emits a trigger and then a
  // again (prob s(a) = sum over triggers of P(a,trigger)). That embedded chain Q has stationary
  // law nu; each of its steps emits 1 + [trigger] tokens, one pair ending at each, so the
  // stationary pair law is  q(a,c) = nu(a)P(a,c)/Z,  q(a,g) = q(g,a) = nu(a)P(a,g)/Z
  // (a, c non-triggers, g a trigger, Z = sum_a nu(a)(1 + s(a))); pairs of two triggers never occur.
  std::vector<int> plain;  // the non-trigger tokens
  for (int i = 0; i < V; ++i)
    if (!is_trigger_[static_cast<std::size_t>(i)]) plain.push_back(i);
  const int n = static_cast<int>(plain.size());
  const auto ns = static_cast<std::size_t>(n);
  std::vector<double> Q(ns * ns), s(Vs, 0.0);
  for (int a : plain)
    for (int g = 0; g < V; ++g)
      if (is_trigger_[static_cast<std::size_t>(g)]) s[static_cast<std::size_t>(a)] += transition_[static_cast<std::size_t>(a) * Vs + static_cast<std::size_t>(g)];
  for (std::size_t i = 0; i < ns; ++i)
    for (std::size_t j = 0; j < ns; ++j)
      Q[i * ns + j] = transition_[static_cast<std::size_t>(plain[i]) * Vs + static_cast<std::size_t>(plain[j])] +
                      (i == j ? s[static_cast<std::size_t>(plain[i])] : 0.0);
  const std::vector<double> nu_plain = stationary_of(Q, n);
  std::vector<double> nu(Vs, 0.0);
  for (std::size_t i = 0; i < ns; ++i) nu[static_cast<std::size_t>(plain[i])] = nu_plain[i];
  double Z = 0.0;
  for (int a : plain) Z += nu[static_cast<std::size_t>(a)] * (1.0 + s[static_cast<std::size_t>(a)]);

  std::vector<double> pair(Vs * Vs, 0.0);  // (x_{-1}, x_0)
  for (int a : plain) {
    const auto as = static_cast<std::size_t>(a);
    for (std::size_t c = 0; c < Vs; ++c) {
      const double w = nu[as] * transition_[as * Vs + c] / Z;
      pair[as * Vs + c] += w;                    // a followed by c (a trigger or not)
      if (is_trigger_[c]) pair[c * Vs + as] += w;  // trigger c followed by its copy of a
    }
  }
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
  for (int a : plain) floor_ += stationary_[static_cast<std::size_t>(a)] * row_entropy[static_cast<std::size_t>(a)];
  first_extra_ = 0.0;
  std::vector<double> cond(Vs);
  for (std::size_t g = 0; g < Vs; ++g) {
    if (!is_trigger_[g] || stationary_[g] <= 0.0) continue;
    for (std::size_t a = 0; a < Vs; ++a) cond[a] = pair[a * Vs + g] / stationary_[g];
    first_extra_ += stationary_[g] * entropy_of(cond.data(), V);
  }
}

void DataGenerator::fill(std::uint64_t stream, std::uint64_t batch_index, int batch, std::int32_t* rows) const {
  const int V = config_.vocab;
  const int N = row_length();
  const auto Vs = static_cast<std::size_t>(V);
  const std::uint64_t stream_seed = derive_seed(config_.seed, "data", stream);
  for (int r = 0; r < batch; ++r) {
    // One counter-based stream per row: row r of batch i never depends on what came before.
    PhiloxStream rng(stream_seed, batch_index * static_cast<std::uint64_t>(batch) + static_cast<std::uint64_t>(r));
    std::int32_t* x = rows + static_cast<std::ptrdiff_t>(r) * N;  // (T+1)
    switch (config_.task) {
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
    }
  }
}

std::vector<double> DataGenerator::marginal() const { return stationary_; }

double DataGenerator::entropy_floor() const {
  return floor_ + first_extra_ / static_cast<double>(config_.seq_len);
}

double DataGenerator::entropy_floor(bool bos) const {
  if (!bos) return entropy_floor();
  const double T = config_.seq_len;
  return (T * entropy_floor() + entropy_of(stationary_.data(), config_.vocab)) / (T + 1.0);
}

std::vector<int> DataGenerator::trigger_tokens() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < is_trigger_.size(); ++i)
    if (is_trigger_[i]) out.push_back(static_cast<int>(i));
  return out;
}

}  // namespace p0sim::sim
