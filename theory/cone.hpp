#pragma once
// The cone model of value vectors under uniform attention (DESIGN.md section 1).
// Under a causal mask the attention output at position t is o_t = (1/(t+1)) sum_{j<=t} v_j;
// under a bidirectional mask every position gets (1/T) sum_{j<T} v_j.
// With H heads, d splits into H blocks of d/H, each head with its own unit axis u_h and its own
// independent value vectors drawn from the same model in dimension d/H; the outputs are
// concatenated, so ||o_t||^2 is the sum of the heads' squared norms. With H > 1, `cos_axis_mean`
// is the cosine to the unit axis (u_1, ..., u_H)/sqrt(H) of the concatenated space.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.hpp"

namespace p0sim::theory {

enum class ValueModel { axis, cap, gauss, count };
enum class AttnMask { causal, bidirectional, count };

constexpr std::array<std::string_view, 3> enum_names_of(ValueModel) { return {"axis", "cap", "gauss"}; }
constexpr std::array<std::string_view, 2> enum_names_of(AttnMask) { return {"causal", "bidirectional"}; }

// One point of the cone model. Fields a model does not use are ignored (set to NaN in output).
struct ConePoint {
  ValueModel model = ValueModel::gauss;
  AttnMask mask = AttnMask::causal;
  int d = 64;          // total dimension (all heads), d >= 2, d % heads == 0, d/heads >= 2
  int T = 16;          // sequence length, T >= 1
  double theta = 1.0;  // cap: half-angle of the cap, (0, pi]
  double mu = 1.0;     // axis: component along u
  double sigma = 1.0;  // axis: norm of the complement part; gauss: per-coordinate std dev (> 0)
  double m = 1.0;      // gauss: mean along u
  int heads = 1;
};

// The quantities reported per (point, t); definitions in cone.cpp and the README.
enum class Quantity {
  norm_sq_mean,            // E ||o_t||^2
  norm_sq_var,             // Var ||o_t||^2
  norm_mean,               // E ||o_t||
  cos_axis_mean,           // E cos(o_t, u)
  p0_gap,                  // E||o_0|| - E||o_t||
  p0_beats_t_prob,         // P(||o_0|| > ||o_t||)
  p0_largest_prob,         // P(position 0 has the strictly largest norm among 0..T-1) (Monte Carlo only)
  p0_largest_union_bound,  // 1 - sum_{t=1}^{T-1} P(||o_t|| >= ||o_0||), clamped to [0,1] (closed form only where
                           // p0_beats_t_prob has one)
  count
};

// The names are the `quantity` column of cone CSVs.
constexpr std::array<std::string_view, 8> enum_names_of(Quantity) {
  return {"norm_sq_mean", "norm_sq_var",     "norm_mean",       "cos_axis_mean",
          "p0_gap",       "p0_beats_t_prob", "p0_largest_prob", "p0_largest_union_bound"};
}

inline constexpr auto kAllQuantities = enum_values<Quantity>();

// Throws p0sim::UsageError naming the option ("--d", "--theta", "--sigma", "--heads", ...) when
// the point is outside the model's domain.
void validate(const ConePoint& p);

// Closed form of quantity q at position t (0 <= t < T), or nullopt where none exists.
// Exact up to double rounding (series/quadrature converged to ~1e-12 relative).
std::optional<double> closed_form(const ConePoint& p, int t, Quantity q);

// --- the cap model's cosine x = <v,u>, density prop. to (1-x^2)^((d-3)/2) on [cos theta, 1] ---
// Finite and accurate on the whole grid 2 <= d <= 4096, 0 < theta <= pi (no underflow to 0/0).
double cap_cos_moment(int d, double theta, int k);       // E x^k, k = 1..4
double cap_cos_cdf(int d, double theta, double x);       // P(<v,u> <= x)
double cap_cos_quantile(int d, double theta, double p);  // inverse CDF, p in (0,1): the exact sampler
// 1 - x^2 at the same quantile, computed directly: use it for the complement radius sqrt(1-x^2),
// which 1 - x*x cannot resolve for tiny theta (the cap then spans only a few doubles below 1).
double cap_sin2_quantile(int d, double theta, double p);

}  // namespace p0sim::theory
