// The Gaussian model's closed forms against independent computations: Boost's noncentral
// chi-squared, numerical integration, and a Monte Carlo with its own Philox stream.
#include <boost/math/distributions/non_central_chi_squared.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "common/rng.hpp"
#include "common/stats.hpp"
#include "theory/cone.hpp"
#include "theory/cone_math.hpp"
#include "tests/theory_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace theory_closed_gauss_test {

using namespace p0sim::theory;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using p0sim::test::gauss_point;
namespace bm = boost::math;

namespace {

// int_0^inf f(y) pdf(y) dy for Y ~ noncentral chi^2(dof, nc), by adaptive Gauss-Kronrod.
template <class F>
double ncchi_expect(double dof, double nc, F&& f) {
  const bm::non_central_chi_squared_distribution<double, p0sim::MathPolicy> dist(dof, nc);
  const double hi = std::sqrt(bm::quantile(bm::complement(dist, 1e-20)));  // the mass beyond is negligible
  // y = u^2 removes the sqrt-type endpoint behaviour at 0 that stalls Gauss-Kronrod.
  return bm::quadrature::gauss_kronrod<double, 61>::integrate(
      [&](double u) { return f(u * u) * bm::pdf(dist, u * u) * 2.0 * u; }, 0.0, hi, 10, 1e-13);
}

// P(||A|| > ||A+S||/n) with A ~ N(mu, s^2 I_d), S ~ N(t mu, t s^2 I_d), simulated directly.
double mc_beats(int d, int t, double m, double sigma, int trials, std::uint64_t seed, double* se) {
  p0sim::PhiloxStream rng(seed, 0);
  const double n = t + 1.0;
  std::vector<double> a(d), sum(d);
  long hits = 0;
  for (int i = 0; i < trials; ++i) {
    for (int c = 0; c < d; ++c) a[c] = (c == 0 ? m : 0.0) + sigma * rng.normal();
    sum = a;
    for (int j = 0; j < t; ++j)
      for (int c = 0; c < d; ++c) sum[c] += (c == 0 ? m : 0.0) + sigma * rng.normal();
    double na = 0.0, nt = 0.0;
    for (int c = 0; c < d; ++c) {
      na += a[c] * a[c];
      nt += sum[c] * sum[c] / (n * n);
    }
    hits += na > nt;
  }
  const double p = static_cast<double>(hits) / trials;
  *se = std::sqrt(std::max(p * (1 - p), 1.0 / trials) / trials);
  return p;
}

// P(l1 X1 > |l2| X2) (upper) or its complement = int pdf_X2(x) [c]cdf_X1(|l2| x / l1) dx, with the
// eigen-decomposition of M = [[n^2-1, -sqrt t], [-sqrt t, -t]] recomputed here.
double beats_by_integral(int d, int t, double snr2, bool upper) {
  const double n = t + 1.0;
  const double pm = n * n - 1.0, qm = -std::sqrt(static_cast<double>(t)), rm = -static_cast<double>(t);
  const double h = std::sqrt(0.25 * (pm - rm) * (pm - rm) + qm * qm);
  const double l1 = 0.5 * (pm + rm) + h, l2 = 0.5 * (pm + rm) - h;
  double ex = qm, ey = l1 - pm;  // first row of (M - l1 I) e = 0
  const double en = std::hypot(ex, ey);
  ex /= en;
  ey /= en;
  const double g1 = ex * 1.0 + ey * std::sqrt(t), g2 = -ey * 1.0 + ex * std::sqrt(t);
  const bm::non_central_chi_squared_distribution<double, p0sim::MathPolicy> x1(d, snr2 * g1 * g1),
      x2(d, snr2 * g2 * g2);
  const double rho = -l2 / l1;
  const double hi = bm::quantile(bm::complement(x2, 1e-20));  // X2's mass beyond is negligible
  return bm::quadrature::gauss_kronrod<double, 31>::integrate(
      [&](double x) {
        const double tail = upper ? bm::cdf(bm::complement(x1, rho * x)) : bm::cdf(x1, rho * x);
        return bm::pdf(x2, x) * tail;
      },
      0.0, hi, 8, 1e-11);
}

}  // namespace

TEST_CASE("gauss E||o||^2 and Var||o||^2 equal the noncentral chi-squared mean and variance",
          "[theory][closed][gauss]") {
  const auto [d, heads, m, sigma] = GENERATE(
      table<int, int, double, double>({{2, 1, 0.0, 1.0}, {8, 2, 1.0, 0.5}, {64, 4, -0.7, 2.0}, {512, 1, 3.0, 0.1}}));
  const int T = 17;
  CAPTURE(d, heads, m, sigma);
  const ConePoint p = gauss_point(d, T, m, sigma, heads);
  for (int t : {0, 1, 5, 16}) {
    CAPTURE(t);
    const double n = t + 1.0;
    // (n / sigma^2) ||o_t||^2 ~ chi'^2_d(n H m^2 / sigma^2)
    const double nc = n * heads * m * m / (sigma * sigma);
    const double scale = sigma * sigma / n;
    const double mean = scale * (d + nc), var = scale * scale * 2.0 * (d + 2.0 * nc);
    CHECK_THAT(*closed_form(p, t, Quantity::norm_sq_mean), WithinRel(mean, 1e-13));
    CHECK_THAT(*closed_form(p, t, Quantity::norm_sq_var), WithinRel(var, 1e-12));
  }
}

TEST_CASE("E sqrt of a noncentral chi-squared by Poisson series equals quadrature", "[theory][closed][gauss]") {
  const double dof = GENERATE(1.0, 2.0, 5.0, 64.0);
  const double nc = GENERATE(0.0, 0.5, 10.0, 200.0);
  CAPTURE(dof, nc);
  const double ref = ncchi_expect(dof, nc, [](double y) { return std::sqrt(y); });
  CHECK_THAT(detail::ncchi_sqrt_mean(dof, nc), WithinRel(ref, 1e-10));
}

TEST_CASE("gauss mean cosine series reduces to erf in one dimension and matches quadrature",
          "[theory][closed][gauss]") {
  const double eta = GENERATE(-2.0, 0.0, 0.3, 1.0, 4.0, 20.0);
  CAPTURE(eta);
  // d = 1: cos = sign(Z1), whose mean is erf(eta / sqrt 2).
  CHECK_THAT(detail::gauss_cos_mean(1.0, eta), WithinAbs(bm::erf(eta / std::sqrt(2.0)), 1e-14));
  // d = 3: E[Z1 / sqrt(Z1^2 + R)], R ~ chi^2_2 with density e^{-r/2}/2: inner integral in closed
  // form, int_0^inf e^{-r/2}/2 (z^2+r)^{-1/2} dr = sqrt(pi/2) e^{z^2/2} erfc(|z|/sqrt 2).
  const double ref = bm::quadrature::gauss_kronrod<double, 61>::integrate(
      [&](double z) {
        const double phi = std::exp(-0.5 * (z - eta) * (z - eta)) / std::sqrt(2.0 * M_PI);
        const double inner = std::sqrt(M_PI / 2.0) * std::exp(0.5 * z * z) * bm::erfc(std::abs(z) / std::sqrt(2.0));
        return phi * z * inner;
      },
      eta - 12.0, eta + 12.0, 20, 1e-13);  // Gaussian mass beyond 12 sd: < 1e-32
  CHECK_THAT(detail::gauss_cos_mean(3.0, eta), WithinAbs(ref, 1e-11));
}

TEST_CASE("gauss P(||o_0|| > ||o_t||) at m = 0 is the single incomplete beta of the 2x2 form",
          "[theory][closed][gauss]") {
  // m = 0: with n = t+1, M = [[n^2-1, -sqrt t], [-sqrt t, -t]], eigenvalues l1 > 0 > l2, and
  // P = ibetac(d/2, d/2, |l2| / (l1 + |l2|)). Eigenvalues by the characteristic polynomial here.
  const int d = GENERATE(2, 3, 16, 256);
  const int t = GENERATE(1, 2, 7, 100);
  CAPTURE(d, t);
  const double n = t + 1.0;
  const double tr = n * n - 1.0 - t, det = -(n * n - 1.0) * t - t;
  const double l1 = 0.5 * tr + std::sqrt(0.25 * tr * tr - det), l2 = 0.5 * tr - std::sqrt(0.25 * tr * tr - det);
  const double x0 = -l2 / (l1 - l2);
  const ConePoint p = gauss_point(d, t + 1, 0.0, 1.7);
  CHECK_THAT(*closed_form(p, t, Quantity::p0_beats_t_prob),
             WithinRel(bm::ibetac(0.5 * d, 0.5 * d, x0, p0sim::MathPolicy()), 1e-11));
}

TEST_CASE("gauss P(||o_0|| > ||o_t||) equals a direct 1-D integral of noncentral chi-squared laws",
          "[theory][closed][gauss]") {
  // Independent of the beta/Poisson machinery: P(l1 X1 > |l2| X2) = int pdf_X2(x) ccdf_X1(|l2| x / l1) dx,
  // with the eigen-decomposition recomputed here from M = [[n^2-1, -sqrt t], [-sqrt t, -t]].
  const auto [d, t, snr2] = GENERATE(
      table<int, int, double>({{2, 1, 1.0}, {4, 3, 0.25}, {8, 15, 4.0}, {32, 63, 1.0}, {64, 1, 25.0}, {3, 200, 2.0}}));
  CAPTURE(d, t, snr2);
  const double n = t + 1.0;
  const double ref_p = beats_by_integral(d, t, snr2, true), ref_q = beats_by_integral(d, t, snr2, false);
  const auto b = detail::gauss_beats_prob(d, snr2, 1.0, n);
  CHECK_THAT(b.p, WithinAbs(ref_p, 1e-9));
  CHECK_THAT(b.q, WithinRel(ref_q, 1e-8) || WithinAbs(ref_q, 1e-14));
  CHECK_THAT(b.p + b.q, WithinAbs(1.0, 1e-14));
}

TEST_CASE("gauss P(||o_0|| > ||o_t||) agrees with a direct Monte Carlo of the vectors", "[theory][closed][gauss]") {
  // 60000 trials per point; tolerance 4.5 binomial standard errors (two-sided 7e-6 per point,
  // under 1e-4 for the 12 points together).
  const int d = GENERATE(2, 5);
  const int t = GENERATE(1, 4);
  const double m = GENERATE(0.0, 0.6, 1.5);
  CAPTURE(d, t, m);
  double se = 0.0;
  const double mc = mc_beats(d, t, m, 1.0, 60000, 1000 + 100 * d + 10 * t + static_cast<int>(m * 10), &se);
  const double cf = *closed_form(gauss_point(d, t + 1, m, 1.0), t, Quantity::p0_beats_t_prob);
  CHECK(std::abs(mc - cf) < 4.5 * se);
}

TEST_CASE("gauss tiny miss probabilities are computed directly, not as 1 - p", "[theory][closed][gauss]") {
  // d = 64, t = 63: ||o_0||^2 ~ 65 +- 11 against ||o_t||^2 ~ 2 +- 0.25; the miss is ~2e-33, far
  // below double resolution of 1 - p, yet computed to full relative accuracy.
  const auto b = detail::gauss_beats_prob(64, 1.0, 1.0, 64.0);
  CHECK(b.q > 0.0);
  CHECK(b.q < 1e-30);
  CHECK_THAT(b.q, WithinRel(beats_by_integral(64, 63, 1.0, false), 1e-6));
  CHECK(b.p > 1.0 - 2e-16);
  // The union bound is then 1 to double precision.
  CHECK(*closed_form(gauss_point(512, 64, 1.0, 1.0), 0, Quantity::p0_largest_union_bound) == 1.0);
}

TEST_CASE("gauss union bound is 1 minus the summed miss probabilities, clamped at 0", "[theory][closed][gauss]") {
  const auto [d, T, m] = GENERATE(table<int, int, double>({{2, 4, 0.5}, {4, 8, 1.0}, {16, 12, 0.0}, {2, 64, 2.0}}));
  CAPTURE(d, T, m);
  const ConePoint p = gauss_point(d, T, m, 1.0);
  double miss = 0.0;
  for (int t = 1; t < T; ++t) miss += 1.0 - *closed_form(p, t, Quantity::p0_beats_t_prob);
  CHECK_THAT(*closed_form(p, T - 1, Quantity::p0_largest_union_bound), WithinAbs(std::max(0.0, 1.0 - miss), 1e-12));
}

TEST_CASE("gauss E||o_0|| at m = 0 is sigma sqrt2 Gamma((d+1)/2)/Gamma(d/2)", "[theory][closed][gauss]") {
  const int d = GENERATE(2, 3, 64, 1024);
  const double sigma = 0.3;
  CAPTURE(d);
  const double ref = sigma * std::sqrt(2.0) * bm::tgamma_ratio(0.5 * (d + 1), 0.5 * d);
  CHECK_THAT(*closed_form(gauss_point(d, 4, 0.0, sigma), 0, Quantity::norm_mean), WithinRel(ref, 1e-13));
}

TEST_CASE("causal gauss gap is positive and grows with t while the mean cosine rises", "[theory][closed][gauss]") {
  const int d = GENERATE(4, 64, 512);
  const int heads = GENERATE(1, 2);
  CAPTURE(d, heads);
  const ConePoint p = gauss_point(d, 64, 0.5, 1.0, heads);
  CHECK(*closed_form(p, 0, Quantity::p0_gap) == 0.0);
  double prev_gap = 0.0, prev_cos = -1.0, prev_prob = 0.0;
  for (int t : {0, 1, 2, 4, 8, 16, 32, 63}) {
    CAPTURE(t);
    const double gap = *closed_form(p, t, Quantity::p0_gap), cosm = *closed_form(p, t, Quantity::cos_axis_mean);
    const double prob = *closed_form(p, t, Quantity::p0_beats_t_prob);
    if (t > 0) {
      CHECK(gap > prev_gap);
      CHECK(cosm > prev_cos);
      CHECK(prob >= prev_prob - 1e-15);  // near 1 the sums round either way
    }
    prev_gap = gap;
    prev_cos = cosm;
    prev_prob = prob;
  }
}

}  // namespace theory_closed_gauss_test
