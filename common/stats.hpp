#pragma once
// Project-wide Boost.Math policy and the small statistics every estimate carries.
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/policies/policy.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

namespace p0sim {

// Domain, pole, overflow and evaluation errors throw (std::domain_error, std::overflow_error,
// boost::math::evaluation_error); the CLI turns them into one clear line. Never ignore_error.
using MathPolicy =
    boost::math::policies::policy<boost::math::policies::domain_error<boost::math::policies::throw_on_error>,
                                  boost::math::policies::pole_error<boost::math::policies::throw_on_error>,
                                  boost::math::policies::overflow_error<boost::math::policies::throw_on_error>,
                                  boost::math::policies::evaluation_error<boost::math::policies::throw_on_error>>;

// A missing estimate (too few samples, no data): written as an empty CSV cell or JSON null.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Welford's running mean and variance; merge() combines partial sums in a fixed order.
struct RunningStats {
  std::uint64_t n = 0;
  double mean = 0.0;
  double m2 = 0.0;

  void add(double x) {
    ++n;
    const double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
  }
  void merge(const RunningStats& o) {
    if (o.n == 0) return;
    if (n == 0) {
      *this = o;
      return;
    }
    const double total = static_cast<double>(n + o.n);
    const double delta = o.mean - mean;
    mean += delta * static_cast<double>(o.n) / total;
    m2 += o.m2 + delta * delta * static_cast<double>(n) * static_cast<double>(o.n) / total;
    n += o.n;
  }
  double variance() const { return n > 1 ? m2 / static_cast<double>(n - 1) : std::numeric_limits<double>::quiet_NaN(); }
  double std_error() const { return std::sqrt(variance() / static_cast<double>(n)); }
  // Half-width of the two-sided `level` confidence interval for the mean (Student t, n-1 dof).
  double ci_half_width(double level) const {
    if (n < 2) return std::numeric_limits<double>::quiet_NaN();
    boost::math::students_t_distribution<double, MathPolicy> t(static_cast<double>(n - 1));
    return boost::math::quantile(boost::math::complement(t, (1.0 - level) / 2.0)) * std_error();
  }
};

}  // namespace p0sim
