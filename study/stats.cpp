#include "study/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>

#include "common/stats.hpp"

namespace p0sim::study {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

Interval mean_interval(const std::vector<double>& x, double level, Range range) {
  RunningStats s;
  for (double v : x) s.add(v);
  Interval out;
  out.n = static_cast<long>(s.n);
  out.mean = s.n > 0 ? s.mean : kNaN;
  const double h = s.ci_half_width(level);  // NaN when n < 2
  out.lo = std::isnan(h) ? h : std::max(range.lo, out.mean - h);
  out.hi = std::isnan(h) ? h : std::min(range.hi, out.mean + h);
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
  r.dof = (va + vb) * (va + vb) / (va * va / static_cast<double>(sa.n - 1) + vb * vb / static_cast<double>(sb.n - 1));
  boost::math::students_t_distribution<double, MathPolicy> t(r.dof);
  r.p_value = 2.0 * boost::math::cdf(boost::math::complement(t, std::fabs(r.t)));
  return r;
}

}  // namespace p0sim::study
