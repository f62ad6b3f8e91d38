// The cone model's Monte Carlo (theory/cone_mc.cpp) against the closed forms, and its
// reproducibility.
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "common/stats.hpp"
#include "theory/cone.hpp"
#include "theory/cone_mc.hpp"
#include "tests/theory_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace theory_mc_cone_test {

using namespace p0sim::theory;

namespace {

ConePoint make_point(ValueModel model, int d, int T, double param, AttnMask mask = AttnMask::causal) {
  ConePoint p;
  p.model = model;
  p.mask = mask;
  p.d = d;
  p.T = T;
  switch (model) {
    case ValueModel::gauss:
      p.m = param;
      p.sigma = 1.5;
      break;
    case ValueModel::axis:
      p.mu = param;
      p.sigma = 0.75;
      break;
    case ValueModel::cap:
      p.theta = param;
      break;
    case ValueModel::count:
      break;
  }
  return p;
}

std::vector<int> grid_positions(int T) { return p0sim::test::positions_within(T, {0, 1, T / 2, T - 1}); }

using p0sim::test::same_bits;

}  // namespace

TEST_CASE("vectorised and scalar generators give bit-identical normals, and uniforms in (0,1)", "[theory][mc]") {
  using Generator = void (*)(float*, std::uint64_t, std::uint64_t, std::uint64_t);
  struct Pair {
    const char* name;
    Generator vectorised, scalar;
  };
  const Pair gen = GENERATE(Pair{"normals", philox_normals, philox_normals_scalar},
                            Pair{"uniforms", philox_uniforms, philox_uniforms_scalar});
  const bool uniforms = std::string(gen.name) == "uniforms";
  CAPTURE(gen.name, philox_normals_vectorised());
  std::vector<float> a(kNormalsPerCall), b(kNormalsPerCall);
  for (std::uint64_t key : {0ull, 1ull, 0x0123456789abcdefull, ~0ull}) {
    for (std::uint64_t stream : {0ull, 7ull, 1ull << 40}) {
      for (std::uint64_t call : {0ull, 1ull, 1000ull, (1ull << 27) - 1}) {
        const std::uint64_t block0 = call * (kNormalsPerCall / 4);
        gen.vectorised(a.data(), key, stream, block0);
        gen.scalar(b.data(), key, stream, block0);
        CAPTURE(key, stream, block0);
        REQUIRE(std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0);
        if (uniforms)
          for (float u : a) REQUIRE((u > 0.0f && u < 1.0f));
      }
    }
  }
}

TEST_CASE("the normal stream is standard normal (Kolmogorov-Smirnov) and continues across fills", "[theory][mc]") {
  const int n = 200000;
  std::vector<float> z(n), y(n);
  NormalStream gen(12345, 6);
  gen.fill(z.data(), n);
  NormalStream pieces(12345, 6);  // the same stream drawn in odd-sized pieces
  for (int done = 0, step = 1; done < n; done += step, step = step * 3 % 1001 + 1)
    pieces.fill(y.data() + done, std::min(step, n - done));
  REQUIRE(std::memcmp(z.data(), y.data(), sizeof(float) * n) == 0);

  std::sort(z.begin(), z.end());
  boost::math::normal_distribution<double, p0sim::MathPolicy> phi;
  double dmax = 0.0;
  for (int i = 0; i < n; ++i) {
    const double F = boost::math::cdf(phi, static_cast<double>(z[static_cast<std::size_t>(i)]));
    dmax = std::max({dmax, std::fabs(F - static_cast<double>(i) / n), std::fabs(F - static_cast<double>(i + 1) / n)});
  }
  // KS critical value at level 0.001: 1.949 / sqrt(n).
  CHECK(dmax < 1.949 / std::sqrt(static_cast<double>(n)));
}

TEST_CASE("the uniform stream is uniform (Kolmogorov-Smirnov) and continues across fills", "[theory][mc]") {
  const int n = 200000;
  std::vector<float> u(n), y(n);
  UniformStream gen(4321, 9);
  gen.fill(u.data(), n);
  UniformStream pieces(4321, 9);
  for (int done = 0, step = 1; done < n; done += step, step = step * 3 % 1001 + 1)
    pieces.fill(y.data() + done, std::min(step, n - done));
  REQUIRE(std::memcmp(u.data(), y.data(), sizeof(float) * n) == 0);
  std::sort(u.begin(), u.end());
  double dmax = 0.0;
  for (int i = 0; i < n; ++i) {
    const double F = u[static_cast<std::size_t>(i)];
    dmax = std::max({dmax, std::fabs(F - static_cast<double>(i) / n), std::fabs(F - static_cast<double>(i + 1) / n)});
  }
  CHECK(dmax < 1.949 / std::sqrt(static_cast<double>(n)));  // KS critical value at level 0.001
}

TEST_CASE("Monte Carlo matches every closed form on the d x T grid", "[theory][mc][slow]") {
  struct Case {
    ValueModel model;
    double param;
  };
  const Case cases[] = {{ValueModel::gauss, 0.0},
                        {ValueModel::gauss, 1.0},
                        {ValueModel::axis, 1.0},
                        {ValueModel::axis, 0.25},
                        {ValueModel::cap, std::numbers::pi / 6},
                        {ValueModel::cap, 2.0},
                        {ValueModel::cap, std::numbers::pi}};
  const int ds[] = {2, 3, 8, 64, 512};
  const int Ts[] = {1, 2, 16, 256};
  // Bonferroni: the whole grid makes at most 7 cases x 5 d x 4 T x 4 positions x 7 quantities
  // comparisons; each is checked at level 0.01 / that count, so the suite fails by chance with
  // probability below 1%.
  const double comparisons = 7.0 * 5 * 4 * 4 * 7;
  const double alpha = 0.01 / comparisons;
  boost::math::normal_distribution<double, p0sim::MathPolicy> normal;
  const double zc = boost::math::quantile(boost::math::complement(normal, alpha / 2));  // ~4.9
  int checked = 0;
  for (const Case& c : cases) {
    for (int d : ds) {
      for (int T : Ts) {
        const ConePoint p = make_point(c.model, d, T, c.param);
        const std::vector<int> pos = grid_positions(T);
        McOptions opt;
        opt.seed = 2024;
        opt.threads = 2;
        // Trials sized to keep the grid at seconds: the cap's exact sampler costs ~2-13 us a draw.
        const double vectors = static_cast<double>(T) * (c.model == ValueModel::cap ? 60.0 : std::max(d, 16));
        opt.trials = static_cast<std::int64_t>(std::clamp(2.0e7 / vectors, 300.0, 4000.0));
        if (c.model == ValueModel::cap) opt.trials = std::min<std::int64_t>(opt.trials, T >= 256 ? 300 : 1500);
        const McResult r = simulate(p, pos, opt);
        for (std::size_t i = 0; i < pos.size(); ++i) {
          const int t = pos[i];
          const double scale_sq = *closed_form(p, t, Quantity::norm_sq_mean);
          for (Quantity q : kAllQuantities) {
            const auto cf = closed_form(p, t, q);
            if (!cf || q == Quantity::p0_largest_prob || q == Quantity::p0_largest_union_bound) continue;
            const p0sim::RunningStats& s = r.stats[i][static_cast<int>(q)];
            CAPTURE(p0sim::enum_name(c.model), c.param, d, T, t, p0sim::enum_name(q), *cf, s.mean, s.std_error(), s.n);
            if (q == Quantity::p0_beats_t_prob) {
              // Exact (Clopper-Pearson) interval for a binomial proportion at the adjusted level.
              using Binomial = boost::math::binomial_distribution<double, p0sim::MathPolicy>;
              const double n = static_cast<double>(s.n), k = std::round(s.mean * n);
              const double lo = Binomial::find_lower_bound_on_p(n, k, alpha / 2);
              const double hi = Binomial::find_upper_bound_on_p(n, k, alpha / 2);
              CHECK(*cf >= lo - 1e-12);
              CHECK(*cf <= hi + 1e-12);
            } else {
              // Float32 vectors round ||o||^2 at ~1e-7 relative: a floor for zero-variance cases.
              const double floor =
                  q == Quantity::norm_sq_var ? 1e-5 * scale_sq * scale_sq : 1e-5 * (1.0 + std::sqrt(scale_sq));
              CHECK(std::fabs(s.mean - *cf) <= zc * s.std_error() + floor);
            }
            ++checked;
          }
        }
      }
    }
  }
  WARN("comparisons checked: " << checked);
  CHECK(checked > 1500);
}

TEST_CASE("multi-head Monte Carlo matches the closed forms and respects the union bound", "[theory][mc][slow]") {
  const auto [model, d, heads, param] = GENERATE(table<ValueModel, int, int, double>({
      {ValueModel::gauss, 64, 4, 1.0},
      {ValueModel::gauss, 8, 2, 0.5},
      {ValueModel::axis, 8, 2, 1.0},
      {ValueModel::axis, 64, 8, 0.25},
      {ValueModel::cap, 64, 4, 1.0},
      {ValueModel::cap, 6, 3, 2.5},
  }));
  const int T = GENERATE(2, 16);
  ConePoint p = make_point(model, d, T, param);
  p.heads = heads;
  const std::vector<int> pos = grid_positions(T);
  McOptions opt;
  opt.trials = 3000;
  opt.seed = 77;
  opt.threads = 2;
  const McResult r = simulate(p, pos, opt);
  // Bonferroni over 6 x 2 generated points x 4 positions x 7 quantities, family level 0.01.
  const double alpha = 0.01 / (6.0 * 2 * 4 * 7);
  boost::math::normal_distribution<double, p0sim::MathPolicy> normal;
  const double zc = boost::math::quantile(boost::math::complement(normal, alpha / 2));
  for (std::size_t i = 0; i < pos.size(); ++i) {
    const int t = pos[i];
    const double scale_sq = *closed_form(p, t, Quantity::norm_sq_mean);
    for (Quantity q : {Quantity::norm_sq_mean, Quantity::norm_sq_var, Quantity::norm_mean, Quantity::cos_axis_mean,
                       Quantity::p0_gap}) {
      const auto cf = closed_form(p, t, q);
      if (!cf) continue;
      const p0sim::RunningStats& s = r.stats[i][static_cast<int>(q)];
      CAPTURE(p0sim::enum_name(model), d, heads, T, t, p0sim::enum_name(q), *cf, s.mean, s.std_error());
      const double floor = q == Quantity::norm_sq_var ? 1e-5 * scale_sq * scale_sq : 1e-5 * (1.0 + std::sqrt(scale_sq));
      CHECK(std::fabs(s.mean - *cf) <= zc * s.std_error() + floor);
    }
  }
  const auto bound = closed_form(p, T - 1, Quantity::p0_largest_union_bound);
  const p0sim::RunningStats& largest = r.stats[0][static_cast<int>(Quantity::p0_largest_prob)];
  if (bound) {
    CAPTURE(*bound, largest.mean, largest.std_error());
    CHECK(largest.mean + zc * std::sqrt(*bound * (1.0 - *bound) / static_cast<double>(largest.n)) + 1e-12 >= *bound);
  }
}

TEST_CASE("reported standard errors match the spread of independent repeated estimates", "[theory][mc]") {
  // R independent runs (different seeds); the sample sd of R estimates has relative sd
  // ~1/sqrt(2(R-1)) = 0.05 for R = 200, so at level 0.001 it lies within 17% of the true
  // standard error, which the mean reported standard error (n = 2000, delta method) must match.
  const ConePoint p = make_point(ValueModel::gauss, 8, 4, 1.0);
  const int R = 200;
  McOptions opt;
  opt.trials = 2000;
  for (Quantity q : {Quantity::norm_sq_mean, Quantity::norm_sq_var, Quantity::p0_gap, Quantity::cos_axis_mean}) {
    p0sim::RunningStats spread, reported;
    for (int rep = 0; rep < R; ++rep) {
      opt.seed = 1000 + static_cast<std::uint64_t>(rep);
      const McResult r = simulate(p, {3}, opt);
      spread.add(r.stats[0][static_cast<int>(q)].mean);
      reported.add(r.stats[0][static_cast<int>(q)].std_error());
    }
    const double ratio = std::sqrt(spread.variance()) / reported.mean;
    CAPTURE(p0sim::enum_name(q), ratio);
    CHECK(ratio > 0.83);
    CHECK(ratio < 1.17);
  }
}

TEST_CASE("threads 1 and 2 give bit-identical statistics", "[theory][mc]") {
  const ConePoint p = make_point(ValueModel::gauss, 16, 33, 0.5);
  std::vector<int> pos(33);
  for (int t = 0; t < 33; ++t) pos[static_cast<std::size_t>(t)] = t;
  McOptions opt;
  opt.trials = 64 * 40 + 17;  // many blocks, a partial last one
  opt.seed = 99;
  opt.threads = 1;
  const McResult one = simulate(p, pos, opt);
  opt.threads = 2;
  const McResult two = simulate(p, pos, opt);
  for (std::size_t i = 0; i < pos.size(); ++i)
    for (Quantity q : kAllQuantities) {
      CAPTURE(i, p0sim::enum_name(q));
      REQUIRE(same_bits(one.stats[i][static_cast<int>(q)], two.stats[i][static_cast<int>(q)]));
    }
  opt.seed = 100;  // and the seed matters
  const McResult other = simulate(p, pos, opt);
  CHECK_FALSE(same_bits(one.stats[5][0], other.stats[5][0]));
}

TEST_CASE("threads 1 and 2 give bit-identical statistics across several merge waves", "[theory][mc][slow]") {
  // 4096 positions make each block's sums large, so a wave holds ~60 blocks and 130 blocks take 3.
  const ConePoint p = make_point(ValueModel::axis, 2, 4096, 0.5);
  std::vector<int> pos(4096);
  for (int t = 0; t < 4096; ++t) pos[static_cast<std::size_t>(t)] = t;
  McOptions opt;
  opt.trials = 64 * 130 + 5;
  opt.seed = 3;
  opt.threads = 1;
  const McResult one = simulate(p, pos, opt);
  opt.threads = 2;
  const McResult two = simulate(p, pos, opt);
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{777}, std::size_t{4095}})
    for (Quantity q : kAllQuantities) {
      CAPTURE(i, p0sim::enum_name(q));
      REQUIRE(same_bits(one.stats[i][static_cast<int>(q)], two.stats[i][static_cast<int>(q)]));
    }
}

TEST_CASE("bidirectional attention gives exactly zero gaps; causal gaps are positive and grow with t", "[theory][mc]") {
  const auto model = GENERATE(ValueModel::gauss, ValueModel::axis, ValueModel::cap);
  CAPTURE(p0sim::enum_name(model));
  const int T = 32;
  std::vector<int> pos(T);
  for (int t = 0; t < T; ++t) pos[static_cast<std::size_t>(t)] = t;
  McOptions opt;
  opt.trials = 2000;
  opt.seed = 5;
  opt.threads = 2;
  const McResult bi = simulate(make_point(model, 16, T, 1.0, AttnMask::bidirectional), pos, opt);
  const McResult ca = simulate(make_point(model, 16, T, 1.0, AttnMask::causal), pos, opt);
  for (std::size_t i = 0; i < pos.size(); ++i) {
    const auto& gap = bi.stats[i][static_cast<int>(Quantity::p0_gap)];
    REQUIRE(gap.mean == 0.0);
    REQUIRE(gap.m2 == 0.0);
    REQUIRE(bi.stats[i][static_cast<int>(Quantity::p0_beats_t_prob)].mean == 0.0);
  }
  REQUIRE(bi.stats[0][static_cast<int>(Quantity::p0_largest_prob)].mean == 0.0);
  CHECK(ca.stats[0][static_cast<int>(Quantity::p0_gap)].mean == 0.0);
  for (std::size_t i = 1; i < pos.size(); ++i) {
    const auto& g = ca.stats[i][static_cast<int>(Quantity::p0_gap)];
    CAPTURE(i, g.mean, g.std_error());
    CHECK(g.mean > 5.0 * g.std_error());  // positive beyond 5 standard errors
  }
  // Growth between doubling positions, where each step is many standard errors.
  const std::size_t steps[] = {1, 2, 4, 8, 16, 31};
  for (std::size_t j = 1; j < std::size(steps); ++j) {
    const auto& g = ca.stats[steps[j]][static_cast<int>(Quantity::p0_gap)];
    const auto& prev = ca.stats[steps[j - 1]][static_cast<int>(Quantity::p0_gap)];
    CAPTURE(steps[j], g.mean, prev.mean, g.std_error());
    CHECK(g.mean > prev.mean + 3.0 * g.std_error());
  }
}

}  // namespace theory_mc_cone_test
