#pragma once
// Monte Carlo twin of theory/cone.hpp: simulates the actual value vectors (full-vector sampling,
// prefix sums, norms) or, for gauss, an exact-in-law reduction of them (the radial estimator);
// counter-based Philox streams per trial, so the result does not depend on the thread count.
#include <cstdint>
#include <string>
#include <vector>

#include "common/stats.hpp"
#include "theory/cone.hpp"
#include "theory/philox_float.hpp"

namespace p0sim::theory {

// The Monte-Carlo estimator.
// - full: samples all T*d coordinates of the value vectors (any model); the independent check of
//   the closed forms.
// - radial (gauss only): per head h keeps a = <S_t, u_h> and R2 = ||S_t - a u_h||^2 of the running
//   sum S_t. A step adds m + sigma z1 to a and sets R2 <- (sqrt(R2) + sigma g)^2 + sigma^2 c, with
//   z1, g ~ N(0,1) (g: the new vector's component along the current rest) and c ~ chi-square(k-2)
//   (the rest of it). By rotational invariance (a_t, R2_t) has exactly the joint law of the
//   full-vector (<S_t,u_h>, ||S_t - <S_t,u_h> u_h||^2), so every reported quantity has the same law;
//   it needs O(T*H) draws per sequence instead of O(T*d). Bidirectional: one draw of the total,
//   a = T m + sigma sqrt(T) z, R2 = T sigma^2 chi-square(k-1). Double precision state; chi-square
//   = 2 Gamma by Marsaglia-Tsang (z^2 for one degree of freedom). Its streams differ from full's,
//   so the two estimators are independent at one seed.
enum class McEstimator { full, radial, count };

constexpr std::array<std::string_view, 2> enum_names_of(McEstimator) { return {"full", "radial"}; }

struct McOptions {
  std::int64_t trials = 10000;
  std::uint64_t seed = 1;  // base seed; each point derives its own (point_seed) from it
  int threads = 1;
  McEstimator estimator = McEstimator::full;
};

// Throws UsageError("--estimator", ...) when the estimator cannot run the point (radial needs gauss).
void validate_estimator(const ConePoint& p, McEstimator e);

// Running statistics per requested position (same order as `positions`) and quantity
// (indexed by static_cast<int>(Quantity)).
// - p0_largest_prob is one estimate per trial (not per position); it is copied to every position.
// - norm_sq_var: mean = the unbiased sample variance s^2 of ||o_t||^2; std_error() = the
//   delta-method standard error of s^2, sqrt((m4 - (n-3)/(n-1) s^4) / n) with m4 the sample
//   4th central moment, so ci_half_width() is an asymptotic interval.
// - p0_largest_union_bound has no Monte Carlo estimate (n = 0).
struct McResult {
  std::vector<int> positions;
  std::vector<std::vector<RunningStats>> stats;  // [position index][quantity]
};

// Positions must be distinct and in [0, T). Throws UsageError for an invalid point (validate()) or
// estimator (validate_estimator()) and rethrows a failure of the cap sampler.
McResult simulate(const ConePoint& p, const std::vector<int>& positions, const McOptions& opt);

// The seed of a point's streams: depends on the base seed and on the model parameters the point
// uses (not on the mask, so the bidirectional control sees the same value vectors as the causal run).
std::uint64_t point_seed(const ConePoint& p, std::uint64_t base_seed);
std::string point_key(const ConePoint& p);

}  // namespace p0sim::theory
