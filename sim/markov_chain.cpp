#include "sim/markov_chain.hpp"

#include <Eigen/Dense>
#include <cmath>

namespace p0sim::sim {

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

}  // namespace

// A Dirichlet(alpha) row is V Gamma(alpha, 1) variates divided by their sum; drawn in logs and
// shifted by the largest, so small alphas do not underflow to an all-zero row.
std::vector<double> dirichlet_bigrams(PhiloxStream& rng, int V, double alpha) {
  const auto Vs = static_cast<std::size_t>(V);
  std::vector<double> P(Vs * Vs), logg(Vs);
  for (int i = 0; i < V; ++i) {
    for (auto& g : logg) g = log_gamma_variate(rng, alpha);
    const double top = *std::max_element(logg.begin(), logg.end());
    double* row = &P[static_cast<std::size_t>(i) * Vs];
    double sum = 0.0;
    for (int j = 0; j < V; ++j) sum += row[j] = std::exp(logg[static_cast<std::size_t>(j)] - top);
    double sum2 = 0.0;
    for (int j = 0; j < V; ++j) sum2 += row[j] = std::max(row[j] / sum, kMinTransition);
    for (int j = 0; j < V; ++j) row[j] /= sum2;
  }
  return P;
}

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

// The process is a Markov chain on pairs (x_{t-1}, x_t). Watch it only at non-trigger tokens a:
// the next step either moves to a non-trigger c (prob P(a,c)) or emits a trigger and then a
// again (prob s(a) = sum over triggers of P(a,trigger)). That embedded chain Q has stationary
// law nu; each of its steps emits 1 + [trigger] tokens, one pair ending at each, so the
// stationary pair law is  q(a,c) = nu(a)P(a,c)/Z,  q(a,g) = q(g,a) = nu(a)P(a,g)/Z
// (a, c non-triggers, g a trigger, Z = sum_a nu(a)(1 + s(a))); pairs of two triggers never occur.
std::vector<double> backcopy_pair_law(const std::vector<double>& P, const std::vector<char>& is_trigger, int V) {
  const auto Vs = static_cast<std::size_t>(V);
  std::vector<int> plain;  // the non-trigger tokens
  for (int i = 0; i < V; ++i)
    if (!is_trigger[static_cast<std::size_t>(i)]) plain.push_back(i);
  const int n = static_cast<int>(plain.size());
  const auto ns = static_cast<std::size_t>(n);
  std::vector<double> Q(ns * ns), s(Vs, 0.0);
  for (int a : plain)
    for (int g = 0; g < V; ++g)
      if (is_trigger[static_cast<std::size_t>(g)])
        s[static_cast<std::size_t>(a)] += P[static_cast<std::size_t>(a) * Vs + static_cast<std::size_t>(g)];
  for (std::size_t i = 0; i < ns; ++i)
    for (std::size_t j = 0; j < ns; ++j)
      Q[i * ns + j] = P[static_cast<std::size_t>(plain[i]) * Vs + static_cast<std::size_t>(plain[j])] +
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
      const double w = nu[as] * P[as * Vs + c] / Z;
      pair[as * Vs + c] += w;                     // a followed by c (a trigger or not)
      if (is_trigger[c]) pair[c * Vs + as] += w;  // trigger c followed by its copy of a
    }
  }
  return pair;
}

double entropy_of(const double* p, int n) {
  double h = 0.0;
  for (int i = 0; i < n; ++i)
    if (p[i] > 0.0) h -= p[i] * std::log(p[i]);
  return h;
}

}  // namespace p0sim::sim
