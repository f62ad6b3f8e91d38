#include "study/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "common/stats.hpp"

namespace p0sim::study {

namespace {
constexpr std::uint64_t kBootstrapSeed = 0x70305349u;  // fixed: a verdict is a function of its runs only

// A uniform index in [0, n) from one 64-bit draw (multiply-shift; the bias, below n / 2^64, is
// irrelevant at these n). std::uniform_int_distribution is not used: its algorithm is
// implementation-defined, so its draws could differ between standard libraries.
std::size_t draw_index(std::mt19937_64& rng, std::size_t n) {
  return static_cast<std::size_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
}

double resampled_mean(std::mt19937_64& rng, const std::vector<double>& x) {
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) sum += x[draw_index(rng, x.size())];
  return sum / static_cast<double>(x.size());
}

// Quantile of sorted values with linear interpolation between order statistics (Hyndman-Fan 7).
double sorted_quantile(const std::vector<double>& sorted, double p) {
  const double h = p * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(h));
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (h - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

double mean_of(const std::vector<double>& x) {
  RunningStats s;
  for (double v : x) s.add(v);
  return s.n > 0 ? s.mean : kNaN;
}

Interval percentile_interval(std::vector<double> stats, double mean, long n, double level) {
  std::sort(stats.begin(), stats.end());
  Interval out;
  out.n = n;
  out.mean = mean;
  out.lo = sorted_quantile(stats, (1.0 - level) / 2.0);
  out.hi = sorted_quantile(stats, (1.0 + level) / 2.0);
  return out;
}
}  // namespace

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
  r.dof = (va + vb) * (va + vb) / (va * va / static_cast<double>(sa.n - 1) + vb * vb / static_cast<double>(sb.n - 1));
  boost::math::students_t_distribution<double, MathPolicy> t(r.dof);
  r.p_value = 2.0 * boost::math::cdf(boost::math::complement(t, std::fabs(r.t)));
  return r;
}

Interval bootstrap_mean_interval(const std::vector<double>& x, double level, int resamples) {
  if (x.size() < 2) return Interval{static_cast<long>(x.size()), mean_of(x), kNaN, kNaN};
  std::mt19937_64 rng(kBootstrapSeed);
  std::vector<double> means(static_cast<std::size_t>(resamples));
  for (double& m : means) m = resampled_mean(rng, x);
  return percentile_interval(std::move(means), mean_of(x), static_cast<long>(x.size()), level);
}

Interval bootstrap_difference_interval(const std::vector<double>& a, const std::vector<double>& b, double level,
                                       int resamples) {
  const double diff = mean_of(a) - mean_of(b);
  const long n = static_cast<long>(a.size() + b.size());
  if (a.size() < 2 || b.size() < 2) return Interval{n, diff, kNaN, kNaN};
  std::mt19937_64 rng(kBootstrapSeed);
  std::vector<double> diffs(static_cast<std::size_t>(resamples));
  for (double& d : diffs) {
    const double ma = resampled_mean(rng, a);
    d = ma - resampled_mean(rng, b);
  }
  return percentile_interval(std::move(diffs), diff, n, level);
}

double cohens_d(const std::vector<double>& a, const std::vector<double>& b) {
  RunningStats sa, sb;
  for (double v : a) sa.add(v);
  for (double v : b) sb.add(v);
  if (sa.n == 0 || sb.n == 0 || sa.n + sb.n < 3) return kNaN;
  const double pooled = std::sqrt((sa.m2 + sb.m2) / static_cast<double>(sa.n + sb.n - 2));
  const double diff = sa.mean - sb.mean;
  if (pooled == 0.0) return diff == 0.0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), diff);
  return diff / pooled;
}

Proportion clopper_pearson(long k, long n, double level) {
  Proportion out{k, n, kNaN, kNaN, kNaN};
  if (n <= 0) return out;
  if (k < 0 || k > n) throw std::domain_error("clopper_pearson: successes outside 0..n");
  using boost::math::binomial_distribution;
  const double alpha = (1.0 - level) / 2.0, trials = static_cast<double>(n), successes = static_cast<double>(k);
  out.p = successes / trials;
  out.lo =
      k == 0 ? 0.0
             : binomial_distribution<double, MathPolicy>::find_lower_bound_on_p(
                   trials, successes, alpha, binomial_distribution<double, MathPolicy>::clopper_pearson_exact_interval);
  out.hi =
      k == n ? 1.0
             : binomial_distribution<double, MathPolicy>::find_upper_bound_on_p(
                   trials, successes, alpha, binomial_distribution<double, MathPolicy>::clopper_pearson_exact_interval);
  return out;
}

}  // namespace p0sim::study
