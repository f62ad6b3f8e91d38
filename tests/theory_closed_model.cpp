// closed_form() across models, masks and heads: moment identities, the bidirectional control,
// the exact probabilities of the cap and axis models, and input validation.
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <string>

#include "common/errors.hpp"
#include "theory/cone.hpp"
#include "theory/cone_math.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace theory_closed_model_test {

using namespace p0sim::theory;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

ConePoint make_point(ValueModel model, int d, int T, int heads, AttnMask mask = AttnMask::causal) {
  ConePoint p;
  p.model = model;
  p.mask = mask;
  p.d = d;
  p.T = T;
  p.heads = heads;
  p.theta = 0.8;
  p.mu = 0.6;
  p.sigma = 0.9;
  p.m = 0.4;
  return p;
}

}  // namespace

TEST_CASE("E||o_t||^2 = H(||Ev||^2 + (E||v||^2 - ||Ev||^2)/(t+1)) for axis and cap", "[theory][closed][model]") {
  const int d = GENERATE(2, 6, 64);
  const int heads = GENERATE(1, 2);
  if (d / heads < 2) return;
  CAPTURE(d, heads);
  const int k = d / heads;
  for (int t : {0, 1, 3, 9}) {
    CAPTURE(t);
    const double n = t + 1.0;
    const ConePoint axis = make_point(ValueModel::axis, d, 10, heads);
    CHECK_THAT(*closed_form(axis, t, Quantity::norm_sq_mean), WithinRel(heads * (0.36 + 0.81 / n), 1e-14));
    const ConePoint cap = make_point(ValueModel::cap, d, 10, heads);
    const double kappa = cap_cos_moment(k, 0.8, 1);
    CHECK_THAT(*closed_form(cap, t, Quantity::norm_sq_mean),
               WithinRel(heads * (kappa * kappa + (1 - kappa * kappa) / n), 1e-13));
  }
}

TEST_CASE("cap Var||o_t||^2 is 0 at t=0 and Var<v1,v2>/4 per head at t=1", "[theory][closed][model]") {
  // n = 2: ||o||^2 = (2 + 2<v1,v2>)/4 per head; <v1,v2> = x1 x2 + r1 r2 <w1,w2> with
  // E<w1,w2>^2 = 1/(k-1), so Var<v1,v2> = m2^2 + (1-m2)^2/(k-1) - kappa^4 (raw moments only).
  const int d = GENERATE(2, 3, 8, 64, 512);
  const double theta = GENERATE(0.3, 1.2, 2.4);
  const int heads = GENERATE(1, 2);
  if (d / heads < 2) return;
  CAPTURE(d, theta, heads);
  ConePoint p = make_point(ValueModel::cap, d, 4, heads);
  p.theta = theta;
  const int k = d / heads;
  CHECK(*closed_form(p, 0, Quantity::norm_sq_var) == 0.0);
  const double m1 = cap_cos_moment(k, theta, 1), m2 = cap_cos_moment(k, theta, 2);
  const double var_pair = m2 * m2 + (1 - m2) * (1 - m2) / (k - 1) - m1 * m1 * m1 * m1;
  CHECK_THAT(*closed_form(p, 1, Quantity::norm_sq_var), WithinRel(heads * var_pair / 4.0, 1e-10));
}

TEST_CASE("axis Var||o_t||^2 is H 2(n-1) sigma^4 / (n^3 (k-1))", "[theory][closed][model]") {
  const int d = GENERATE(2, 9, 64);
  CAPTURE(d);
  const ConePoint p = make_point(ValueModel::axis, d, 20, 1);
  for (int t : {0, 1, 19}) {
    const double n = t + 1.0;
    CHECK_THAT(*closed_form(p, t, Quantity::norm_sq_var),
               WithinAbs(2.0 * (n - 1) * std::pow(0.9, 4) / (n * n * n * (d - 1)), 1e-15));
  }
}

TEST_CASE("position 0's own vector gives exact norms and cosines for axis and cap", "[theory][closed][model]") {
  const int heads = GENERATE(1, 4);
  const ConePoint axis = make_point(ValueModel::axis, 16, 5, heads);
  CHECK_THAT(*closed_form(axis, 0, Quantity::norm_mean), WithinRel(std::sqrt(heads * (0.36 + 0.81)), 1e-15));
  CHECK_THAT(*closed_form(axis, 0, Quantity::cos_axis_mean), WithinRel(0.6 / std::sqrt(1.17), 1e-15));
  const ConePoint cap = make_point(ValueModel::cap, 16, 5, heads);
  CHECK_THAT(*closed_form(cap, 0, Quantity::norm_mean), WithinRel(std::sqrt(heads), 1e-15));
  CHECK_THAT(*closed_form(cap, 0, Quantity::cos_axis_mean), WithinRel(cap_cos_moment(16 / heads, 0.8, 1), 1e-15));
  // Averages of several vectors have no closed form for these models: the Monte Carlo covers them.
  CHECK_FALSE(closed_form(cap, 2, Quantity::norm_mean).has_value());
  CHECK_FALSE(closed_form(axis, 2, Quantity::cos_axis_mean).has_value());
  CHECK_FALSE(closed_form(cap, 2, Quantity::p0_gap).has_value());
  CHECK_FALSE(closed_form(cap, 2, Quantity::p0_largest_prob).has_value());
}

TEST_CASE("unit-norm cap vectors: position 0 beats every later position surely", "[theory][closed][model]") {
  const ConePoint cap = make_point(ValueModel::cap, 8, 6, 2);
  CHECK(*closed_form(cap, 0, Quantity::p0_beats_t_prob) == 0.0);
  for (int t = 1; t < 6; ++t) CHECK(*closed_form(cap, t, Quantity::p0_beats_t_prob) == 1.0);
  CHECK(*closed_form(cap, 3, Quantity::p0_largest_union_bound) == 1.0);
}

TEST_CASE("axis in 2-D heads ties with probability 2^-(tH): complement signs all agree", "[theory][closed][model]") {
  const int heads = GENERATE(1, 3);
  CAPTURE(heads);
  const ConePoint p = make_point(ValueModel::axis, 2 * heads, 5, heads);
  for (int t = 1; t < 5; ++t)
    CHECK_THAT(*closed_form(p, t, Quantity::p0_beats_t_prob), WithinRel(1.0 - std::exp2(-t * heads), 1e-15));
  double miss = 0.0;
  for (int t = 1; t < 5; ++t) miss += std::exp2(-t * heads);
  CHECK_THAT(*closed_form(p, 0, Quantity::p0_largest_union_bound), WithinAbs(std::max(0.0, 1.0 - miss), 1e-15));
  const ConePoint p3 = make_point(ValueModel::axis, 3 * heads, 5, heads);
  CHECK(*closed_form(p3, 2, Quantity::p0_beats_t_prob) == 1.0);
}

TEST_CASE("bidirectional mask gives every position the same output: zero gaps, zero beat probability",
          "[theory][closed][model]") {
  const ValueModel model = GENERATE(ValueModel::axis, ValueModel::cap, ValueModel::gauss);
  const int T = GENERATE(1, 2, 16);
  const int heads = GENERATE(1, 2);
  CAPTURE(p0sim::enum_name(model), T, heads);
  const ConePoint p = make_point(model, 8, T, heads, AttnMask::bidirectional);
  const double e0 = *closed_form(p, 0, Quantity::norm_sq_mean), v0 = *closed_form(p, 0, Quantity::norm_sq_var);
  for (int t = 0; t < T; ++t) {
    CAPTURE(t);
    CHECK(*closed_form(p, t, Quantity::p0_gap) == 0.0);
    CHECK(*closed_form(p, t, Quantity::p0_beats_t_prob) == 0.0);
    CHECK(*closed_form(p, t, Quantity::norm_sq_mean) == e0);
    CHECK(*closed_form(p, t, Quantity::norm_sq_var) == v0);
  }
  CHECK(*closed_form(p, 0, Quantity::p0_largest_union_bound) == (T == 1 ? 1.0 : 0.0));
  // while the causal twin separates position 0 (gauss: E||o_0|| > E||o_t||)
  if (model == ValueModel::gauss && T > 1) {
    ConePoint causal = p;
    causal.mask = AttnMask::causal;
    CHECK(*closed_form(causal, T - 1, Quantity::p0_gap) > 0.0);
  }
}

TEST_CASE("validate rejects each bad input naming its option", "[theory][closed][model]") {
  using M = ValueModel;
  struct Bad {
    const char* option;
    ConePoint p;
  };
  auto with = [](M model, auto mutate) {
    ConePoint p = make_point(model, 8, 4, 1);
    mutate(p);
    return p;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<Bad> cases = {
      {"--d", with(M::gauss, [](ConePoint& p) { p.d = 1; })},
      {"--T", with(M::gauss, [](ConePoint& p) { p.T = 0; })},
      {"--heads", with(M::gauss, [](ConePoint& p) { p.heads = 0; })},
      {"--heads", with(M::gauss, [](ConePoint& p) { p.heads = 3; })},
      {"--heads", with(M::gauss, [](ConePoint& p) { p.heads = 8; })},
      {"--theta", with(M::cap, [](ConePoint& p) { p.theta = 0.0; })},
      {"--theta", with(M::cap, [](ConePoint& p) { p.theta = 3.2; })},
      {"--theta", with(M::cap, [nan](ConePoint& p) { p.theta = nan; })},
      {"--sigma", with(M::gauss, [](ConePoint& p) { p.sigma = 0.0; })},
      {"--sigma", with(M::axis, [](ConePoint& p) { p.sigma = -1.0; })},
      {"--mu", with(M::axis, [inf](ConePoint& p) { p.mu = inf; })},
      {"--m", with(M::gauss, [nan](ConePoint& p) { p.m = nan; })},
  };
  for (const auto& c : cases) {
    CAPTURE(c.option);
    try {
      validate(c.p);
      FAIL("accepted a bad point");
    } catch (const p0sim::UsageError& e) {
      CHECK(std::string(e.what()).rfind(std::string(c.option) + ":", 0) == 0);
    }
    CHECK_THROWS_AS(closed_form(c.p, 0, Quantity::norm_sq_mean), p0sim::UsageError);
  }
  // Fields a model does not use are not checked (the CLI prints them as NaN).
  ConePoint g = make_point(M::gauss, 8, 4, 1);
  g.theta = nan;
  g.mu = nan;
  CHECK_NOTHROW(validate(g));
  CHECK_NOTHROW(validate(with(M::cap, [](ConePoint& p) { p.theta = std::numbers::pi; })));
  CHECK_THROWS_AS(closed_form(g, 4, Quantity::norm_mean), p0sim::UsageError);
}

}  // namespace theory_closed_model_test
