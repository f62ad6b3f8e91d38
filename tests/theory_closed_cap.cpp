// The cap model's cosine law: anchors, ibeta vs series vs quadrature, the exact sampler, and
// finiteness on the whole (d, theta) grid.
#include <algorithm>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <vector>

#include "common/rng.hpp"
#include "theory/cone.hpp"
#include "theory/cone_math.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace theory_closed_cap_test {

using namespace p0sim::theory;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
constexpr double kPi = std::numbers::pi;

namespace {

// E x^j by tanh-sinh quadrature of the unnormalised density (1-x^2)^((d-3)/2) on [cos theta, 1],
// scaled by its value at the rim when theta < pi/2 so that large d does not underflow.
double quad_moment(int d, double theta, int j) {
  const double c = std::cos(theta), s2 = std::sin(theta) * std::sin(theta);
  const double alpha = 0.5 * (d - 3);
  const double scale = c > 0.0 ? s2 : 1.0;
  boost::math::quadrature::tanh_sinh<double> ts;
  auto integrate = [&](int power) {
    // tanh_sinh passes xc = b - x > 0 near the right end and xc = a - x < 0 near the left end,
    // so 1 - x and 1 + x are exact where the density is singular (d = 2).
    return ts.integrate(
        [&](double x, double xc) {
          const double one_m_x = xc > 0 ? xc : 1.0 - x;
          const double one_p_x = xc < 0 ? -xc + (1.0 + c) : 1.0 + x;
          return std::pow(x, power) * std::exp(alpha * std::log(one_m_x * one_p_x / scale));
        },
        c, 1.0);
  };
  return integrate(j) / integrate(0);
}

double ks_statistic(std::vector<double> xs, int d, double theta) {
  std::sort(xs.begin(), xs.end());
  const double n = static_cast<double>(xs.size());
  double dmax = 0.0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double f = cap_cos_cdf(d, theta, xs[i]);
    dmax = std::max({dmax, (i + 1) / n - f, f - i / n});
  }
  return dmax;
}

}  // namespace

TEST_CASE("cap mean cosine in d=3 is (1 + cos theta)/2", "[theory][closed][cap]") {
  const double theta = GENERATE(1e-7, 0.01, 0.3, 1.0, kPi / 2, 2.0, 3.0, kPi);
  CAPTURE(theta);
  CHECK_THAT(cap_cos_moment(3, theta, 1),
             WithinAbs((1.0 + std::cos(theta)) / 2.0, 2e-16) || WithinRel((1.0 + std::cos(theta)) / 2.0, 1e-14));
}

TEST_CASE("the full sphere (theta = pi) has mean cosine 0 and E x^2 = 1/d", "[theory][closed][cap]") {
  const int d = GENERATE(2, 3, 7, 64, 1024, 4096);
  CAPTURE(d);
  CHECK_THAT(cap_cos_moment(d, kPi, 1), WithinAbs(0.0, 1e-15));
  CHECK_THAT(cap_cos_moment(d, kPi, 2), WithinRel(1.0 / d, 1e-13));
  CHECK_THAT(cap_cos_moment(d, kPi, 3), WithinAbs(0.0, 1e-15));
  CHECK_THAT(cap_cos_moment(d, kPi, 4), WithinRel(3.0 / (d * (d + 2.0)), 1e-13));  // E x^4 on S^{d-1}
}

TEST_CASE("the mean cosine tends to 1 as the cap closes", "[theory][closed][cap]") {
  const int d = GENERATE(2, 3, 64, 4096);
  CAPTURE(d);
  double prev = 0.0;
  for (double theta : {1e-1, 1e-2, 1e-3, 1e-5, 1e-8}) {
    const double kappa = cap_cos_moment(d, theta, 1);
    CHECK(kappa > prev);
    CHECK(kappa <= 1.0);
    // x >= cos theta, so 1 - kappa <= 1 - cos theta = 2 sin^2(theta/2)
    CHECK(1.0 - kappa <= 2.0 * std::pow(std::sin(theta / 2), 2) * (1 + 1e-12));
    prev = kappa;
  }
  CHECK_THAT(prev, WithinAbs(1.0, 1e-15));
}

TEST_CASE("cap moments from ibeta/series equal numerical quadrature of the density", "[theory][closed][cap]") {
  const int d = GENERATE(2, 3, 5, 8, 64, 512);
  const double theta = GENERATE(0.1, 0.7, 1.5, 2.5, kPi);
  CAPTURE(d, theta);
  for (int j = 1; j <= 4; ++j) {
    CAPTURE(j);
    const double ref = quad_moment(d, theta, j);
    // Quadrature is accurate to ~1e-13 relative here; odd moments at theta = pi vanish.
    CHECK_THAT(cap_cos_moment(d, theta, j), WithinRel(ref, 1e-10) || WithinAbs(ref, 1e-14));
  }
}

TEST_CASE("ibeta and series forms of the cap law agree where both are finite", "[theory][closed][cap]") {
  using detail::CapMethod;
  const int d = GENERATE(4, 16, 64, 128);
  const double theta = GENERATE(0.2, 0.5, 1.0, 1.4);
  CAPTURE(d, theta);
  for (int j = 1; j <= 4; ++j) {
    CHECK_THAT(detail::cap_raw_moment(d, theta, j, CapMethod::series),
               WithinRel(detail::cap_raw_moment(d, theta, j, CapMethod::ibeta), 1e-12));
  }
  for (double p : {1e-6, 0.1, 0.5, 0.9, 1 - 1e-6}) {
    CAPTURE(p);
    const double x_ib = detail::cap_quantile(d, theta, p, CapMethod::ibeta);
    const double x_se = detail::cap_quantile(d, theta, p, CapMethod::series);
    CHECK_THAT(x_se, WithinRel(x_ib, 1e-12));
    CHECK_THAT(detail::cap_cdf(d, theta, x_ib, CapMethod::series), WithinAbs(p, 1e-12));
    CHECK_THAT(detail::cap_cdf(d, theta, x_ib, CapMethod::ibeta), WithinAbs(p, 1e-12));
  }
}

TEST_CASE("where the cap's mass underflows, ibeta fails but the automatic form stays exact", "[theory][closed][cap]") {
  // theta = pi/6: I_{sin^2}((d-1)/2, 1/2) ~ 1e-310 at d = 1024 and ~1e-620 at d = 2048.
  const double naive = detail::cap_raw_moment(2048, kPi / 6, 1, detail::CapMethod::ibeta);
  CHECK_FALSE(std::isfinite(naive));
  const int d = GENERATE(1024, 2048, 4096);
  CAPTURE(d);
  CHECK(detail::cap_uses_series(d, kPi / 6));
  const double kappa = cap_cos_moment(d, kPi / 6, 1);
  // Laplace at the rim: x - c ~ Exp with mean sin^2/((d-3) cos) (1 + O(1/d)).
  const double c = std::cos(kPi / 6), s2 = 0.25;
  CHECK_THAT(kappa - c, WithinRel(s2 / ((d - 3) * c), 5.0 / d));
}

TEST_CASE("cap law is finite, bounded and monotone in theta on the whole grid", "[theory][closed][cap]") {
  const std::vector<double> thetas = {1e-8, 1e-4, 0.01, 0.1, kPi / 6, 1.0, kPi / 2 - 1e-3, kPi / 2, 2.0, 3.0, kPi};
  const int d = GENERATE(2, 3, 4, 5, 8, 16, 33, 64, 128, 256, 512, 1024, 2048, 4095, 4096);
  CAPTURE(d);
  double prev_kappa = 2.0;
  for (double theta : thetas) {
    CAPTURE(theta);
    const double c = std::cos(theta), s2 = std::sin(theta) * std::sin(theta);
    const double kappa = cap_cos_moment(d, theta, 1);
    REQUIRE(std::isfinite(kappa));
    CHECK(kappa >= c);
    CHECK(kappa <= 1.0);
    CHECK(kappa <= prev_kappa);
    if (prev_kappa > 1e-200 && prev_kappa <= 1.0) CHECK(kappa < prev_kappa);
    prev_kappa = kappa;
    for (int j = 2; j <= 4; ++j) {
      const double mj = cap_cos_moment(d, theta, j);
      REQUIRE(std::isfinite(mj));
      CHECK(std::abs(mj) <= 1.0);
      if (j % 2 == 0) CHECK(mj >= (c > 0 ? std::pow(c, j) : 0.0) * (1 - 1e-14));
    }
    const auto cm = detail::cap_moments(d, theta);
    REQUIRE(std::isfinite(cm.var));
    REQUIRE(std::isfinite(cm.r2_mean));
    CHECK(cm.var >= 0.0);
    CHECK(cm.r2_mean > 0.0);
    CHECK(cm.r2_mean <= (c > 0 ? s2 : 1.0) * (1 + 1e-14));
    double prev_x = c;
    for (double p : {1e-12, 0.01, 0.5, 0.99, 1 - 1e-12}) {
      const double x = cap_cos_quantile(d, theta, p);
      REQUIRE(std::isfinite(x));
      CHECK(x >= prev_x);
      CHECK(x <= 1.0);
      const double f = cap_cos_cdf(d, theta, x);
      REQUIRE(std::isfinite(f));
      prev_x = x;
    }
  }
}

TEST_CASE("Var x of a narrow cap in d=3 equals the uniform law's (1-cos theta)^2/12", "[theory][closed][cap]") {
  // In d = 3 the cosine is uniform on [cos theta, 1] (Archimedes), so even at theta = 1e-6, where
  // m2 - m1^2 would be pure rounding noise, Var x and E(1-x^2) are known exactly.
  const double theta = GENERATE(1e-6, 1e-3, 0.3, 1.0, 1.4);
  CAPTURE(theta);
  const double one_m_c = 2.0 * std::pow(std::sin(theta / 2), 2);
  const auto cm = detail::cap_moments(3, theta);
  CHECK_THAT(cm.var, WithinRel(one_m_c * one_m_c / 12.0, 1e-12));
  CHECK_THAT(cm.r2_mean, WithinRel(one_m_c * (3.0 - one_m_c) / 3.0, 1e-12));  // (1-c)(2+c)/3
  CHECK_THAT(cm.mean, WithinRel(1.0 - one_m_c / 2.0, 1e-15));
}

TEST_CASE("exact cap sampler passes Kolmogorov-Smirnov against cap_cos_cdf", "[theory][closed][cap]") {
  // n = 20000 draws per point, 8 points: critical value 1.95/sqrt(n) is the 0.1% level, so the
  // family of 8 rejects a correct sampler with probability below 0.8% (fixed seed: deterministic).
  const auto [d, theta] = GENERATE(table<int, double>(
      {{2, 2.5}, {3, 1.0}, {8, kPi}, {64, 0.5}, {512, 2.0}, {1024, kPi / 6}, {4096, kPi / 6}, {4096, 0.05}}));
  CAPTURE(d, theta);
  constexpr int n = 20000;
  p0sim::PhiloxStream rng(20260101, static_cast<std::uint64_t>(d) * 1000 + static_cast<std::uint64_t>(theta * 100));
  std::vector<double> xs(n);
  double sum = 0.0, sum2 = 0.0;
  for (auto& x : xs) {
    const double u = rng.uniform();
    const auto draw = detail::cap_quantile_draw(d, theta, u);
    x = draw.x;
    CHECK_THAT(draw.r2, WithinAbs((1.0 - x) * (1.0 + x), 1e-15));
    sum += x;
    sum2 += x * x;
  }
  CHECK(ks_statistic(xs, d, theta) < 1.95 / std::sqrt(static_cast<double>(n)));
  // The sample mean against kappa (recurrence route, independent of the inverse CDF): within
  // 4.5 standard errors (two-sided 7e-6 per point).
  const double mean = sum / n, var = sum2 / n - mean * mean;
  CHECK(std::abs(mean - cap_cos_moment(d, theta, 1)) < 4.5 * std::sqrt(var / n) + 1e-15);
}

TEST_CASE("sample variance of exact draws matches the narrow cap's Var x at large d", "[theory][closed][cap]") {
  // Var x ~ 5e-9 at d=4096, theta=pi/6, where m2 - m1^2 keeps ~7 digits only. Standard error of
  // the sample variance ~ sqrt((mu4 - var^2)/n); tolerance 4.5 of them.
  const auto [d, theta] = GENERATE(table<int, double>({{4096, kPi / 6}, {1024, 0.01}, {64, 0.3}}));
  CAPTURE(d, theta);
  constexpr int n = 40000;
  p0sim::PhiloxStream rng(77, static_cast<std::uint64_t>(d));
  const double c = std::cos(theta);
  std::vector<double> w(n);  // x - cos theta, from r2 exactly: (s2 - r2) / (x + c)
  const double s2 = std::sin(theta) * std::sin(theta);
  double mean = 0.0;
  for (auto& wi : w) {
    const auto draw = detail::cap_quantile_draw(d, theta, rng.uniform());
    wi = (s2 - draw.r2) / (draw.x + c);
    mean += wi / n;
  }
  double m2 = 0.0, m4 = 0.0;
  for (double wi : w) {
    const double e = wi - mean;
    m2 += e * e / n;
    m4 += e * e * e * e / n;
  }
  const double expected = detail::cap_moments(d, theta).var;
  CHECK(std::abs(m2 - expected) < 4.5 * std::sqrt((m4 - m2 * m2) / n));
}

}  // namespace theory_closed_cap_test
