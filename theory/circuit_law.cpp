// Closed forms of the hand-wired circuit (circuit_law.hpp); the weights that realise it are in
// study/circuit.cpp. Legend: C = d, V vocab, T positions.
//
// The wiring makes, after layer 0's attention (alpha the value map's token coefficient, beta its
// u coefficient, u the last basis vector, e_j ~ N(0, I_C) the embeddings):
//   h_0 = (1 + alpha) e_{x_0} + beta u,
//   h_t = tau_t + beta u,  tau_t = e_{x_t} + alpha/(t+1) sum_{s<=t} e_{x_s}        (t >= 1, causal).
// With alpha = -1, h_0 = beta u whatever the first token, and its readout is
//   r_0 = <RMSNorm(h_0), u> = beta / sqrt(beta^2/C + eps) = sqrt(C) beta / sqrt(beta^2 + C eps) =: R,
// sqrt(C) up to the relative C eps / (2 beta^2) of the norm's eps.
// Competitors (alpha = -1): r_t = sqrt(C) <h_t,u> / sqrt(|h_t|^2 + C eps) <= R, with equality iff
// h_t is a positive multiple of u, i.e. tau_t = 0 (tau_t has a Gaussian component in C-1 > 0
// directions orthogonal to u otherwise, so it is parallel to u with probability 0). tau_t = 0 iff
// x_0 = ... = x_t, so the best competitor ties with position 0 iff x_1 = x_0: P(identified) =
// 1 - 1/V for uniform tokens. (No content-only circuit can do better: a constant prefix makes
// every causal position identical.)
//
// The readout's law for alpha != -1 (embeddings e ~ N(0, I_C), u fixed): with
// e_u = <e,u> ~ N(0,1) and Y = |e - e_u u|^2 ~ chi^2_{C-1}, independent,
//   <h_0,u> = beta + (1+alpha) e_u,  |h_0|^2 = <h_0,u>^2 + (1+alpha)^2 Y.
// Dividing by |1+alpha|: X = beta/|1+alpha| + sign(1+alpha) e_u ~ N(delta, 1), delta = beta/|1+alpha|,
// and r_0 = sqrt(C) X / sqrt(X^2 + Y). With T = X / sqrt(Y/(C-1)) ~ noncentral t(C-1, delta),
//   r_0 = sqrt(C) T / sqrt(T^2 + C - 1),
// a monotone map, so quantiles map through and the CDF is F_T(r sqrt(C-1)/sqrt(C - r^2)).
// Assumptions: i.i.d. Gaussian embedding coordinates (the table is drawn per model, so one model
// gives V independent draws, one per token); the norm's eps is neglected, which shifts r_0 by a
// relative C eps / (2 |h_0|^2) ~ eps / (2 (1+alpha)^2), far below the sampling error here.
// Competitors follow the same law given the token counts: tau_t ~ N(0, Gamma_t I),
// Gamma_t = sum_j gamma_j^2, gamma_j = [j = x_t] + alpha c_j/(t+1), so delta_t = beta/sqrt(Gamma_t).
//
// After block 0 at alpha = -1 the neuron adds c w (w orthogonal to u) at position 0, so
// p0_norm = sqrt(beta^2 + c^2) exactly.
#include "theory/circuit_law.hpp"

#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <limits>

#include "common/stats.hpp"

namespace p0sim::theory {

using NonCentralT = boost::math::non_central_t_distribution<double, MathPolicy>;

double readout_at_p0_exact(int d, double beta, double norm_eps) {
  return std::sqrt(static_cast<double>(d)) * beta / std::sqrt(beta * beta + d * norm_eps);
}

ReadoutLaw readout_law(int d, double alpha, double beta, double norm_eps) {
  ReadoutLaw law;
  law.d = d;
  if (alpha == -1.0) {
    law.point_mass = true;
    law.point = readout_at_p0_exact(d, beta, norm_eps);
    return law;
  }
  law.nu = d - 1.0;
  law.delta = beta / std::fabs(1.0 + alpha);
  return law;
}

std::string ReadoutLaw::name() const { return point_mass ? "point" : "noncentral_t"; }

double ReadoutLaw::cdf(double r) const {
  if (point_mass) return r < point ? 0.0 : 1.0;
  const double sd = std::sqrt(static_cast<double>(d));
  if (r <= -sd) return 0.0;
  if (r >= sd) return 1.0;
  const NonCentralT t(nu, delta);
  return boost::math::cdf(t, r * std::sqrt(nu) / std::sqrt(d - r * r));
}

double ReadoutLaw::quantile(double p) const {
  if (point_mass) return point;
  const NonCentralT t(nu, delta);
  const double q = boost::math::quantile(t, p);
  return std::sqrt(static_cast<double>(d)) * q / std::sqrt(q * q + nu);
}

double ReadoutLaw::mean() const {
  if (point_mass) return point;
  const NonCentralT t(nu, delta);
  const double sd = std::sqrt(static_cast<double>(d));
  auto integrand = [&](double x) {
    const double dens = boost::math::pdf(t, x);
    return dens == 0.0 ? 0.0 : sd * x / std::sqrt(x * x + nu) * dens;
  };
  // The map is bounded by sqrt(d), so the integral converges like the density's tails.
  const double inf = std::numeric_limits<double>::infinity();
  return boost::math::quadrature::gauss_kronrod<double, 61>::integrate(integrand, -inf, inf, 15, 1e-12);
}

double identified_prob(bool causal, double alpha, int V, int T) {
  // Causal, alpha = -1: a tie iff x_1 = x_0. Bidirectional: position 0 is exchangeable with the
  // others, so it is the unique maximum with probability at most 1/T (ties lower it).
  return causal ? (alpha == -1.0 ? 1.0 - 1.0 / V : std::numeric_limits<double>::quiet_NaN()) : 1.0 / T;
}

double p0_norm_after_block0(bool causal, double alpha, double beta, double c) {
  return causal && alpha == -1.0 ? std::sqrt(beta * beta + c * c) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace p0sim::theory
