#pragma once
// Private numerics behind theory/cone.cpp: the cap's cosine law in two exact representations,
// the pair-moment variance of ||o_t||^2, and the Gaussian model's Poisson-mixture closed forms.
// Exposed (namespace detail) so tests can pit one representation against another.
//
// Notation. k = d/H is the per-head dimension; a value vector of one head is v = x u + r w with
// x = <v,u>, r >= 0 and w uniform on the unit sphere of the (k-1)-dimensional complement of u,
// independent of (x, r). n is the number of vectors averaged into the output: t+1 (causal) or T
// (bidirectional).
#include <array>
#include <functional>
#include <string_view>

#include "common/enum_names.hpp"

namespace p0sim::theory::detail {

// --- the cap's cosine x, density prop. to (1-x^2)^(a-1) on [cos theta, 1], a = (k-1)/2 ---------
// Two exact representations of the tail mass G(y) = int_y^1 (1-x^2)^(a-1) dx:
//   ibeta:  G(y) = B(a,1/2)/2 * I_{1-y^2}(a, 1/2)                      (y >= 0)
//           G(y) = B(a,1/2)/2 * (1 + I_{y^2}(1/2, a))                   (y < 0)
//   series: G(y) = (1-y^2)^a y / (2a) * F_a(1-y^2),  F_a(z) = 2F1(a+1/2, 1; a+1; z)   (y > 0)
// The series form keeps the underflowing factor (1-y^2)^a outside, so ratios of masses stay
// finite where the regularised incomplete beta itself underflows (about 1e-310 at d=1024,
// theta=pi/6). `automatic` uses ibeta unless a*log(sin^2 theta) < -200 (mass below ~1e-87).
enum class CapMethod { automatic, ibeta, series, count };

constexpr std::array<std::string_view, 3> enum_names_of(CapMethod) { return {"automatic", "ibeta", "series"}; }

// 2F1(a+b, 1; a+1; z) for 0 <= z < 1 by its power series (all terms positive, so no cancellation).
double hyp2f1_unit(double a, double b, double z);

bool cap_uses_series(int k, double theta);
// E x^j, j = 1..4, from the exact moment recurrence (integration by parts)
//   m_j = (c^(j-1) rho + (j-1) m_{j-2}) / (k + j - 2),  rho = sin^(2a)(theta) / G(c),  c = cos theta.
double cap_raw_moment(int k, double theta, int j, CapMethod method = CapMethod::automatic);
double cap_cdf(int k, double theta, double x, CapMethod method = CapMethod::automatic);
double cap_quantile(int k, double theta, double p, CapMethod method = CapMethod::automatic);
// The same draw as (x, r^2 = 1 - x^2), r^2 computed directly (x alone cannot resolve 1 - x^2
// when theta is tiny: the whole cap then spans a few doubles below 1).
struct CapDraw {
  double x;
  double r2;
};
CapDraw cap_quantile_draw(int k, double theta, double p, CapMethod method = CapMethod::automatic);

// E x, Var x and E r^2 = E(1 - x^2) of one head, each computed without cancellation: Var x by
// quadrature of centred powers when the cap is narrow (cos theta >= 0.1), where m2 - m1^2 would
// lose up to all digits (Var x ~ 1e-16 at k=4096, theta=0.01).
struct CapMoments {
  double mean;
  double var;
  double r2_mean;
};
CapMoments cap_moments(int k, double theta);

// --- Var ||o||^2 from the moments of (x, s = r^2) ------------------------------------------------
// Per head, with n vectors averaged: y = x - E x, z = s - E s, c_j = E y^j.
struct PairMoments {
  double a;  // E x
  double c2, c3, c4;
  double s_mean;  // E s
  double s_var;   // Var s
  double e_ys;    // E[y z]
  double e_y2z;   // E[y^2 z]
};
// Var ||(1/n) sum_{j<n} v_j||^2 of one head in dimension k (derivation in cone_math.cpp).
double pair_norm_sq_var(const PairMoments& pm, double n, int k);
// The same for the cap, where s = 1 - x^2 makes every term but c2 and E s cancel exactly:
//   Var = [n(n-1)(4 a^2 c2 (n-1) + 2 c2^2) + 2 n(n-1) (E s)^2/(k-1)] / n^4   (exactly 0 at n = 1).
double cap_norm_sq_var(const CapMoments& cm, double n, int k);

// --- Gaussian model ---------------------------------------------------------------------------
// sum_j Pois(j; lambda) f(j) over the Poisson's central range [lo, hi] that holds all but 2e-20
// of its mass, so for |f| <= M the truncation error is below 2e-20 M. Weights by recurrence from
// the mode (each step one rounding, so relative error below ~(hi-lo) * 1e-16).
double poisson_sum(double lambda, const std::function<double(long)>& f);
// E sqrt(Y), Y ~ noncentral chi^2 with `dof` degrees of freedom and noncentrality `nc`.
double ncchi_sqrt_mean(double dof, double nc);
// E Z1 / ||Z||, Z ~ N(eta e_1, I_dof): the mean cosine to the mean direction.
double gauss_cos_mean(double dof, double eta);

// P(||A/n0|| > ||(A+S)/nt||) and its complement, each summed directly (no 1 - p):
// A = sum of n0 vectors, S of nt - n0 further vectors, all i.i.d. N(mu, sigma^2 I_dof),
// snr2 = ||mu||^2 / sigma^2. Requires 1 <= n0 <= nt.
struct BeatsProb {
  double p;  // P(event)
  double q;  // 1 - P(event), computed directly
};
BeatsProb gauss_beats_prob(int dof, double snr2, double n0, double nt);

}  // namespace p0sim::theory::detail
