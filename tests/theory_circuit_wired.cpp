// The hand-wired circuit in the engine's own forward (study/circuit.hpp): exact identification at
// alpha = -1, the norm and sink it predicts, nothing singled out under the bidirectional mask, and
// the noncentral-t law of the readout for alpha != -1.
// Statistical checks use fixed seeds and 99% intervals from the sample size (stated at each check).
#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <catch2/catch.hpp>
#include <cmath>

#include "common/errors.hpp"
#include "sim/layers.hpp"
#include "study/circuit.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace theory_circuit_wired_test {

using namespace p0sim::study;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using p0sim::theory::ReadoutLaw;

namespace {

constexpr double z99 = 2.5758293035489004;  // two-sided 99% normal quantile

// 99% half-width of a binomial proportion p estimated from n trials (normal approximation; n p >= 5 here).
double binomial_hw(double p, double n) { return z99 * std::sqrt(p * (1 - p) / n); }

CircuitResult run(int d, int T, double alpha, p0sim::sim::Mask mask, double c = 100.0, int models = 4,
                  int sequences = 128) {
  CircuitPoint p;
  p.d = d;
  p.T = T;
  p.alpha = alpha;
  p.beta = 1.0;
  p.c = c;
  p.mask = mask;
  CircuitOptions o;
  o.models = models;
  o.sequences = sequences;
  o.seed = 20240611;
  return run_circuit(p, o);
}

}  // namespace

TEST_CASE("alpha = -1 identifies position 0 exactly under the causal mask", "[circuit]") {
  const auto [d, T] = GENERATE(table<int, int>({{8, 8}, {32, 16}, {64, 64}}));
  CAPTURE(d, T);
  const CircuitResult r = run(d, T, -1.0, p0sim::sim::Mask::causal);
  const double R = p0sim::theory::readout_at_p0_exact(d, 1.0, p0sim::sim::layers::norm_eps);
  // R = sqrt(d) beta / sqrt(beta^2 + d eps): sqrt(d) up to the norm's eps (relative d eps / 2).
  CHECK_THAT(R, WithinRel(std::sqrt(double(d)), d * 1e-5));
  // Every position-0 readout is R to rounding, whatever the first token.
  CHECK(r.readout0_max_dev <= 1e-12 * R);
  const double tol = identify_tol(d);
  int ties = 0;
  for (std::size_t n = 0; n < r.margins.size(); ++n) {
    if (r.first_tokens[n] != r.second_tokens[n]) {
      // Every competitor strictly below: the token part tau_t of h_t is nonzero.
      REQUIRE(r.margins[n] > tol);
    } else {
      // h_1 = h_0 exactly when x_1 = x_0: a tie, and no competitor exceeds R.
      REQUIRE(std::fabs(r.margins[n]) <= tol);
      ++ties;
    }
  }
  CHECK(ties > 0);  // the tie branch was exercised
}

TEST_CASE("the identified fraction is 1 - 1/V, the chance that x_1 differs from x_0", "[circuit]") {
  const CircuitResult r = run(16, 16, -1.0, p0sim::sim::Mask::causal, 100.0, 8, 256);
  const double p = 1.0 - 1.0 / 8.0;  // V = d/2 = 8
  const double n = double(r.margins.size());
  CHECK_THAT(r.identified_frac, WithinAbs(p, binomial_hw(p, n)));
}

TEST_CASE("the amplified position 0 has norm sqrt(beta^2 + c^2) in one direction and is the layer-1 sink",
          "[circuit]") {
  const auto [d, T] = GENERATE(table<int, int>({{16, 16}, {64, 32}}));
  CAPTURE(d, T);
  const CircuitResult big = run(d, T, -1.0, p0sim::sim::Mask::causal, 100.0);
  const CircuitResult small = run(d, T, -1.0, p0sim::sim::Mask::causal, 10.0);
  // h_0 after block 0 = beta u + c w with w orthogonal to u: exact norm and one direction (cos 1).
  CHECK_THAT(big.p0_norm_b0, WithinRel(std::sqrt(1.0 + 100.0 * 100.0), 1e-12));
  CHECK_THAT(big.p0_norm_pred, WithinRel(big.p0_norm_b0, 1e-12));
  CHECK_THAT(big.p0_cos_b0, WithinAbs(1.0, 1e-12));
  CHECK_THAT(small.p0_norm_b0, WithinRel(std::sqrt(1.0 + 10.0 * 10.0), 1e-12));
  // Block 1 writes nothing (zero values and MLP), so block 1 keeps the ratio and the direction.
  CHECK_THAT(big.p0_norm_ratio_b1, WithinRel(big.p0_norm_ratio_b0, 1e-12));
  CHECK_THAT(big.p0_cos_b1, WithinAbs(1.0, 1e-12));
  // Competitors get c s_t w with s_t < 1 (their readout is below R), so the ratio exceeds the
  // untouched stream's (about 1) and grows with c.
  CHECK(big.p0_norm_ratio_b0 > 3.0);
  CHECK(big.p0_norm_ratio_b0 > small.p0_norm_ratio_b0);
  // Every layer-1 head favours key 0 beyond eps = 0.3.
  CHECK(big.sink_rate == 1.0);
  CHECK(big.attn_to_0 > 0.3);
  CHECK(big.attn_to_0 > 5 * big.attn_to_1);
}

TEST_CASE("the same weights under the bidirectional mask single out nothing", "[circuit]") {
  const int T = GENERATE(16, 32);
  CAPTURE(T);
  const CircuitResult r = run(32, T, -1.0, p0sim::sim::Mask::bidirectional, 100.0, 8, 128);
  // Position 0 is exchangeable with the others: it is the unique argmax with probability <= 1/T.
  const double p = 1.0 / T, n = double(r.margins.size());
  CHECK(r.identified_frac <= p + binomial_hw(p, n));
  CHECK(r.margin_mean < 0.0);
  CHECK(r.sink_rate == 0.0);
  CHECK(r.attn_to_0 < 0.3);
  // No high norm at position 0 (an exchangeable position has the typical norm; 64-sequence batch
  // means of norms near 10 fluctuate by a few percent, far inside 20%).
  CHECK_THAT(r.p0_norm_ratio_b0, WithinAbs(1.0, 0.2));
}

TEST_CASE("for alpha != -1 position 0's readout follows sqrt(d) T/sqrt(T^2+d-1), T noncentral t", "[circuit]") {
  const auto [d, alpha] = GENERATE(table<int, double>({{16, 1.0}, {64, 1.0}, {64, 0.5}, {32, 3.0}}));
  CAPTURE(d, alpha);
  const CircuitResult r = run(d, 8, alpha, p0sim::sim::Mask::causal, 100.0, 32, 128);
  // One independent draw per (model, distinct first token): up to 32 tables x V = d/2 tokens.
  const double n = double(r.readout0.size());
  REQUIRE(n >= 0.9 * 32.0 * d / 2);
  // Mean: 99% Student-t interval of the sample mean (n - 1 dof); the quadrature error is ~1e-12.
  boost::math::students_t t(n - 1);
  const double hw = boost::math::quantile(boost::math::complement(t, 0.005)) * r.readout0_ci95 /
                    boost::math::quantile(boost::math::complement(t, 0.025));
  CHECK_THAT(r.readout0_mean, WithinAbs(r.readout0_pred_mean, hw));
  // Quantiles: the count of samples below the predicted p-quantile is Binomial(n, p).
  CircuitPoint p;
  p.d = d;
  p.alpha = alpha;
  const ReadoutLaw law = readout_law(p);
  for (double q : {0.1, 0.5, 0.9}) {
    CAPTURE(q);
    const double cut = law.quantile(q);
    const double below =
        double(std::count_if(r.readout0.begin(), r.readout0.end(), [&](double x) { return x <= cut; })) / n;
    CHECK_THAT(below, WithinAbs(q, binomial_hw(q, n)));
  }
  // Whole law: Kolmogorov-Smirnov statistic below its 1% critical value 1.628/sqrt(n).
  CHECK(r.ks < 1.628 / std::sqrt(n));
  // ... and the same statistic rejects a wrong noncentrality (delta doubled), so the check has power.
  ReadoutLaw wrong = law;
  wrong.delta *= 2;
  std::vector<double> sorted = r.readout0;
  std::sort(sorted.begin(), sorted.end());
  double ks_wrong = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const double F = wrong.cdf(sorted[i]);
    ks_wrong = std::max({ks_wrong, (double(i) + 1) / n - F, F - double(i) / n});
  }
  CHECK(ks_wrong > 1.628 / std::sqrt(n));
}

TEST_CASE("bad circuit parameters are usage errors naming the option", "[circuit]") {
  CircuitPoint p;
  p.vocab = 63;  // needs V <= d - 2 = 62
  CHECK_THROWS_WITH(validate(p), Catch::Contains("--vocab"));
  p = CircuitPoint{};
  p.beta = 0;
  CHECK_THROWS_WITH(validate(p), Catch::Contains("--beta"));
  p = CircuitPoint{};
  p.heads = 3;
  CHECK_THROWS_WITH(validate(p), Catch::Contains("--heads"));
}

}  // namespace theory_circuit_wired_test
