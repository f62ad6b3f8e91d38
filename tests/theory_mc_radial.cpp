// The radial estimator of the gauss cone model (theory/cone_mc.hpp, McEstimator::radial): the same
// law as the full-vector Monte Carlo from O(T*H) draws per sequence. Checked against the closed
// forms, against the full-vector estimator where there is none, and for thread-count invariance.
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/stats.hpp"
#include "theory/cone.hpp"
#include "theory/cone_mc.hpp"
#include "tests/theory_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace theory_mc_radial_test {

using namespace p0sim::theory;
using p0sim::test::gauss_point;

namespace {

McOptions radial_options(std::int64_t trials, std::uint64_t seed, int threads = 2) {
  McOptions opt;
  opt.trials = trials;
  opt.seed = seed;
  opt.threads = threads;
  opt.estimator = McEstimator::radial;
  return opt;
}

std::vector<int> some_positions(int T) { return p0sim::test::positions_within(T, {0, 1, 2, T / 3, T / 2, T - 1}); }

using p0sim::test::same_bits;

}  // namespace

TEST_CASE("radial Monte Carlo agrees with the closed forms for gauss (k = 2, 3, many heads, both masks)",
          "[theory][mc][radial]") {
  // (d, T, heads, m, sigma): k = d/heads covers 2 (no chi-square term), 3 (chi-square(1) = z^2),
  // 4 (Marsaglia-Tsang at shape 1), and large k; T = 1 (position 0 only) to 200.
  const auto [d, T, heads, m, sigma] = GENERATE(table<int, int, int, double, double>({
      {2, 16, 1, 1.0, 1.5},
      {3, 16, 1, 0.5, 1.0},
      {4, 9, 1, 0.0, 1.0},
      {6, 8, 2, 1.0, 0.5},
      {8, 32, 4, 0.3, 1.0},
      {64, 64, 1, 1.0, 1.0},
      {64, 16, 4, 0.25, 2.0},
      {256, 200, 2, 1.0, 1.0},
      {5, 1, 1, 1.0, 1.0},
  }));
  const AttnMask mask = GENERATE(AttnMask::causal, AttnMask::bidirectional);
  const ConePoint p = gauss_point(d, T, m, sigma, heads, mask);
  const std::vector<int> pos = some_positions(T);
  const McResult r = simulate(p, pos, radial_options(300000, 20240601));
  // Tolerances as in theory_mc_cone.cpp: a Bonferroni-adjusted level over every comparison of
  // this test (9 points x 2 masks x <= 6 positions x 6 quantities, family level 0.01); means
  // within the confidence-interval half-width of the sample (RunningStats::ci_half_width,
  // Student t from the sample size), probabilities within the exact Clopper-Pearson interval.
  const double alpha = 0.01 / (9.0 * 2 * 6 * 6);
  for (std::size_t i = 0; i < pos.size(); ++i) {
    const int t = pos[i];
    for (Quantity q : {Quantity::norm_sq_mean, Quantity::norm_sq_var, Quantity::norm_mean, Quantity::cos_axis_mean,
                       Quantity::p0_gap, Quantity::p0_beats_t_prob}) {
      const auto cf = closed_form(p, t, q);
      if (!cf) continue;
      const p0sim::RunningStats& s = r.stats[i][static_cast<int>(q)];
      CAPTURE(d, T, heads, m, sigma, p0sim::enum_name(mask), t, p0sim::enum_name(q), *cf, s.mean, s.std_error(), s.n);
      if (q == Quantity::p0_beats_t_prob) {
        using Binomial = boost::math::binomial_distribution<double, p0sim::MathPolicy>;
        const double n = static_cast<double>(s.n), k = std::round(s.mean * n);
        CHECK(*cf >= Binomial::find_lower_bound_on_p(n, k, alpha / 2) - 1e-12);
        CHECK(*cf <= Binomial::find_upper_bound_on_p(n, k, alpha / 2) + 1e-12);
      } else {
        // Double precision throughout: only rounding (1e-12 relative) below the interval.
        CHECK(std::fabs(s.mean - *cf) <= s.ci_half_width(1.0 - alpha) + 1e-12 * (1.0 + std::fabs(*cf)));
      }
    }
  }
}

TEST_CASE("radial and full-vector Monte Carlo agree on P(position 0 largest) (two-sample test)",
          "[theory][mc][radial]") {
  // No closed form: compare the two estimators. They use different streams, so the estimates are
  // independent; z = (p_radial - p_full) / sqrt(se_radial^2 + se_full^2), the binomial standard
  // errors, must stay within the two-sided level 0.001 (Bonferroni over the 6 points).
  const auto [d, T, heads, m] = GENERATE(table<int, int, int, double>({
      {2, 8, 1, 0.5},
      {3, 16, 1, 0.5},
      {8, 16, 2, 0.5},
      {8, 32, 4, 0.5},
      {6, 32, 1, 0.3},
      {4, 64, 2, 1.0},
  }));
  const ConePoint p = gauss_point(d, T, m, 1.0, heads);
  McOptions full;
  full.trials = 30000;
  full.seed = 31;
  full.threads = 2;
  const McResult rf = simulate(p, {0}, full);
  const McResult rr = simulate(p, {0}, radial_options(200000, 31));
  const auto& a = rf.stats[0][static_cast<int>(Quantity::p0_largest_prob)];
  const auto& b = rr.stats[0][static_cast<int>(Quantity::p0_largest_prob)];
  auto se2 = [](const p0sim::RunningStats& s) { return s.mean * (1.0 - s.mean) / static_cast<double>(s.n); };
  boost::math::normal_distribution<double, p0sim::MathPolicy> normal;
  const double zc = boost::math::quantile(boost::math::complement(normal, 0.001 / 6 / 2));
  const double z = (b.mean - a.mean) / std::sqrt(se2(a) + se2(b));
  CAPTURE(d, T, heads, m, a.mean, b.mean, z, zc);
  CHECK(a.mean > 0.05);  // an informative point: neither estimate is stuck near 0 or 1
  CHECK(a.mean < 0.95);
  CHECK(std::fabs(z) < zc);
}

TEST_CASE("radial Monte Carlo gives bit-identical statistics for 1, 2 and 3 threads", "[theory][mc][radial]") {
  const AttnMask mask = GENERATE(AttnMask::causal, AttnMask::bidirectional);
  const ConePoint p = gauss_point(16, 33, 0.5, 1.0, 2, mask);
  std::vector<int> pos(33);
  for (int t = 0; t < 33; ++t) pos[static_cast<std::size_t>(t)] = t;
  const std::int64_t trials = 64 * 40 + 17;  // many blocks, a partial last block and lane group
  const McResult one = simulate(p, pos, radial_options(trials, 99, 1));
  for (int threads : {2, 3}) {
    const McResult other = simulate(p, pos, radial_options(trials, 99, threads));
    for (std::size_t i = 0; i < pos.size(); ++i)
      for (Quantity q : kAllQuantities) {
        CAPTURE(p0sim::enum_name(mask), threads, i, p0sim::enum_name(q));
        REQUIRE(same_bits(one.stats[i][static_cast<int>(q)], other.stats[i][static_cast<int>(q)]));
      }
  }
  const McResult reseeded = simulate(p, pos, radial_options(trials, 100, 1));  // and the seed matters
  CHECK_FALSE(same_bits(one.stats[5][0], reseeded.stats[5][0]));
}

TEST_CASE("radial Monte Carlo with long sequences draws in chunks and still matches the closed form",
          "[theory][mc][radial]") {
  // T * heads above the chunk of variates drawn at once (512): the chain continues across chunks.
  const ConePoint p = gauss_point(12, 1500, 0.5, 1.0, 3);
  const std::vector<int> pos{0, 511, 512, 1499};
  const McResult r = simulate(p, pos, radial_options(4000, 8));
  const double alpha = 0.01 / (4.0 * 2);
  for (std::size_t i = 0; i < pos.size(); ++i)
    for (Quantity q : {Quantity::norm_sq_mean, Quantity::norm_mean}) {
      const double cf = *closed_form(p, pos[i], q);
      const p0sim::RunningStats& s = r.stats[i][static_cast<int>(q)];
      CAPTURE(pos[i], p0sim::enum_name(q), cf, s.mean, s.std_error());
      CHECK(std::fabs(s.mean - cf) <= s.ci_half_width(1.0 - alpha));
    }
}

TEST_CASE("the radial estimator refuses models other than gauss, naming --estimator", "[theory][mc][radial]") {
  for (ValueModel model : {ValueModel::axis, ValueModel::cap}) {
    ConePoint p;
    p.model = model;
    p.d = 8;
    p.T = 4;
    CAPTURE(p0sim::enum_name(model));
    try {
      simulate(p, {0}, radial_options(100, 1));
      FAIL("no UsageError");
    } catch (const p0sim::UsageError& e) {
      const std::string what = e.what();
      CHECK(what.rfind("--estimator: radial needs --model gauss, got " + p0sim::enum_name(model), 0) == 0);
    }
  }
  CHECK(p0sim::enum_name(McEstimator::full) == "full");
  CHECK(p0sim::enum_name(McEstimator::radial) == "radial");
}

}  // namespace theory_mc_radial_test
