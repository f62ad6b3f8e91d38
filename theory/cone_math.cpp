#include "theory/cone_math.hpp"

#include <algorithm>
#include <boost/math/distributions/non_central_beta.hpp>
#include <boost/math/distributions/poisson.hpp>
#include <boost/math/policies/error_handling.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/tools/roots.hpp>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <limits>

#include "common/stats.hpp"

namespace p0sim::theory::detail {
namespace bm = boost::math;

namespace {

constexpr double kSeriesLogThreshold = -200.0;  // a*log(sin^2 theta) below this: series form

[[noreturn]] void fail(const char* function, const char* message, double value) {
  bm::policies::raise_evaluation_error<double>(function, message, value, MathPolicy());
  throw std::logic_error("unreachable");  // raise_evaluation_error throws under MathPolicy
}

// The cap of one head: c = cos theta, s2 = sin^2 theta (from sin, so exact at small theta).
struct Cap {
  int k;
  double a, c, s2;
  Cap(int k_, double theta) : k(k_), a(0.5 * (k_ - 1)), c(std::cos(theta)), s2(std::sin(theta) * std::sin(theta)) {}
};

bool use_series(const Cap& cap, CapMethod method) {
  if (method == CapMethod::ibeta) return false;
  if (method == CapMethod::series) {
    if (!(cap.c > 0.0)) fail("cap series form", "needs theta < pi/2, got cos theta = %1%", cap.c);
    return true;
  }
  return cap.c > 0.0 && cap.a * std::log(cap.s2) < kSeriesLogThreshold;
}

// Tail mass above y in units of B(a,1/2)/2 (ibeta form); `s2y` = 1 - y^2 passed in exactly.
double tail_ibeta(double a, double y, double s2y) {
  if (y >= 0.0) return bm::ibeta(a, 0.5, s2y, MathPolicy());
  return 1.0 + bm::ibeta(0.5, a, y * y, MathPolicy());
}

// log of the tail mass above y > 0 in the series form, without the constant 1/(2a).
double log_tail_series(double a, double y, double s2y) {
  return a * std::log(s2y) + std::log(y) + std::log(hyp2f1_unit(a, 0.5, s2y));
}

// rho = sin^(2a) theta / G(c): the density at the cap's rim over its mass; all moments follow.
double cap_rho(const Cap& cap, bool series) {
  if (series) return (cap.k - 1) / (cap.c * hyp2f1_unit(cap.a, 0.5, cap.s2));
  const double mass = tail_ibeta(cap.a, cap.c, cap.s2);
  // pow of the same double s2 that ibeta sees, so its rounding cancels in the ratio.
  return 2.0 * std::pow(cap.s2, cap.a) / (bm::beta(cap.a, 0.5, MathPolicy()) * mass);
}

// |x| with I_{x^2}(1/2, a) = g, 0 <= g <= 1/2, by safeguarded Newton in x itself: the map is
// smooth with derivative 2 (1-x^2)^(a-1) / B(1/2, a), and solving in x (not x^2) keeps tiny |x|
// exact. (Boost 1.74's ibeta_inv(0.5, 2, 1e-12) fails to converge, another reason.)
double abs_x_from_central_mass(double a, double g) {
  if (g == 0.0) return 0.0;
  const double b = bm::beta(0.5, a, MathPolicy());
  auto f = [&](double x) {
    const double x2 = x * x;
    return std::make_pair(bm::ibeta(0.5, a, x2, MathPolicy()) - g, 2.0 * std::exp((a - 1.0) * std::log1p(-x2)) / b);
  };
  const double guess = std::min(0.5, 0.5 * g * b);  // the density is <= 1 near 0: x >= g B / 2
  std::uintmax_t iters = 100;
  return bm::tools::newton_raphson_iterate(f, guess, 0.0, 1.0, 50, iters);
}

}  // namespace

double hyp2f1_unit(double a, double b, double z) {
  if (!(z >= 0.0 && z < 1.0)) fail("hyp2f1_unit", "needs 0 <= z < 1, got %1%", z);
  double sum = 1.0, term = 1.0;
  for (int n = 0; n < 10'000'000; ++n) {
    const double ratio = (a + b + n) / (a + 1.0 + n) * z;
    term *= ratio;
    sum += term;
    // Term ratios decrease toward z (b >= 1) or increase toward z (b < 1): bound the rest by a
    // geometric series with the larger of the two.
    const double r = std::max(ratio, z);
    if (term * r < 1e-17 * (1.0 - r) * sum) return sum;
  }
  fail("hyp2f1_unit", "series did not converge at z = %1%", z);
}

bool cap_uses_series(int k, double theta) { return use_series(Cap(k, theta), CapMethod::automatic); }

double cap_raw_moment(int k, double theta, int j, CapMethod method) {
  const Cap cap(k, theta);
  const double rho = cap_rho(cap, use_series(cap, method));
  // m_j = (c^(j-1) rho + (j-1) m_{j-2}) / (k + j - 2): integrate x^(j-1) * x(1-x^2)^(a-1) by parts.
  double m_prev = 1.0, m = rho / (k - 1);  // m_0, m_1
  double cpow = 1.0;                       // c^(j-1)
  for (int i = 2; i <= j; ++i) {
    cpow *= cap.c;
    const double next = (cpow * rho + (i - 1) * m_prev) / (k + i - 2);
    m_prev = m;
    m = next;
  }
  return j == 0 ? 1.0 : m;
}

double cap_cdf(int k, double theta, double x, CapMethod method) {
  const Cap cap(k, theta);
  if (!(x > cap.c)) return 0.0;
  if (x >= 1.0) return 1.0;
  const double s2x = (1.0 - x) * (1.0 + x);
  if (use_series(cap, method)) {
    return -std::expm1(log_tail_series(cap.a, x, s2x) - log_tail_series(cap.a, cap.c, cap.s2));
  }
  const double mass = tail_ibeta(cap.a, cap.c, cap.s2);
  return std::clamp((mass - tail_ibeta(cap.a, x, s2x)) / mass, 0.0, 1.0);
}

CapDraw cap_quantile_draw(int k, double theta, double p, CapMethod method) {
  if (!(p > 0.0 && p < 1.0)) fail("cap_quantile", "needs 0 < p < 1, got %1%", p);
  const Cap cap(k, theta);
  CapDraw out{};
  if (use_series(cap, method)) {
    // Solve log G(y) = log G(c) + log(1-p) for u = log(1 - y^2) in [u_lo, log sin^2 theta]:
    //   h(u) = a (u - log s2) + log(y/c) + log(F_a(e^u) / F_a(s2)) - log(1-p), increasing in u.
    // Since log(y/c) <= -log c and F_a(e^u) <= F_a(s2), h(u_lo) <= -1 at the lower end below.
    const double log_s2 = std::log(cap.s2), log1mp = std::log1p(-p);
    const double log_f_rim = std::log(hyp2f1_unit(cap.a, 0.5, cap.s2));
    auto h = [&](double u) {
      const double z = std::exp(u);
      return cap.a * (u - log_s2) + 0.5 * std::log1p(-z) - std::log(cap.c) + std::log(hyp2f1_unit(cap.a, 0.5, z)) -
             log_f_rim - log1mp;
    };
    const double u_hi = log_s2;
    const double u_lo = log_s2 + (log1mp + std::log(cap.c) - 1.0) / cap.a;
    std::uintmax_t iters = 200;
    const auto [lo, hi] = bm::tools::toms748_solve(h, u_lo, u_hi, h(u_lo), h(u_hi),
                                                   bm::tools::eps_tolerance<double>(50), iters, MathPolicy());
    out.r2 = std::exp(0.5 * (lo + hi));
    out.x = std::sqrt(1.0 - out.r2);
  } else {
    // Masses in units of B(a,1/2)/2: N on the cap, Ic = I_{c^2}(1/2, a) on [0, |c|]. Invert the
    // smaller of the mass below x measured from 0 (g, signed) and the mass above x (u = 1 - g),
    // so neither argument of ibeta_inv is formed as 1 - (something near 1).
    const double mass = tail_ibeta(cap.a, cap.c, cap.s2);
    const double ic = bm::ibeta(0.5, cap.a, cap.c * cap.c, MathPolicy());
    const double g = cap.c >= 0.0 ? ic + p * mass : p * mass - ic;
    const double u = (1.0 - p) * mass;
    if (g <= 0.5) {
      out.x = std::copysign(abs_x_from_central_mass(cap.a, std::abs(g)), g);
      out.r2 = (1.0 - out.x) * (1.0 + out.x);
    } else {
      out.r2 = bm::ibeta_inv(cap.a, 0.5, u, MathPolicy());
      out.x = std::sqrt(1.0 - out.r2);
    }
  }
  out.x = std::clamp(out.x, cap.c, 1.0);
  out.r2 = std::clamp(out.r2, 0.0, cap.c >= 0.0 ? cap.s2 : 1.0);
  return out;
}

double cap_quantile(int k, double theta, double p, CapMethod method) {
  return cap_quantile_draw(k, theta, p, method).x;
}

CapMoments cap_moments(int k, double theta) {
  const Cap cap(k, theta);
  const bool series = use_series(cap, CapMethod::automatic);
  const double rho = cap_rho(cap, series);
  CapMoments cm{};
  cm.mean = rho / (k - 1);
  // E(1-x^2) = G_{a+1}(c) / G_a(c): a ratio of masses with the exponent raised by one.
  if (series) {
    cm.r2_mean =
        cap.s2 * cap.a / (cap.a + 1.0) * hyp2f1_unit(cap.a + 1.0, 0.5, cap.s2) / hyp2f1_unit(cap.a, 0.5, cap.s2);
  } else {
    cm.r2_mean = cap.a / (cap.a + 0.5) * tail_ibeta(cap.a + 1.0, cap.c, cap.s2) / tail_ibeta(cap.a, cap.c, cap.s2);
  }
  if (cap.c < 0.1) {
    // Wide cap: Var x is at least ~ (E x)^2 / 10, so m2 - m1^2 loses at most a digit or two.
    cm.var = (cap.c * rho + 1.0) / k - cm.mean * cm.mean;
    return cm;
  }
  // Narrow cap: integrate centred powers of w = x - c directly. With tau = (x^2 - c^2)/s2 and
  // tau = 1 - exp(-v/a), (1-x^2)^(a-1) dx = const * exp(-v) / x dv on v in [0, inf), a smooth
  // integrand for every k; w / s2 = tau / (x + c) is formed without cancellation.
  auto w_over_s2 = [&](double v, double* x_out) {
    const double tau = -std::expm1(-v / cap.a);
    const double x = std::sqrt(cap.c * cap.c + cap.s2 * tau);
    *x_out = x;
    return tau / (x + cap.c);
  };
  using GK = bm::quadrature::gauss_kronrod<double, 61>;
  constexpr double kUpper = 50.0;  // exp(-50) ~ 2e-22 of the mass lies beyond
  auto integrate = [&](auto&& g) {
    double err = 0.0;
    return GK::integrate(
        [&](double v) {
          double x;
          const double w = w_over_s2(v, &x);
          return std::exp(-v) / x * g(w);
        },
        0.0, kUpper, 15, 1e-14, &err);
  };
  const double z0 = integrate([](double) { return 1.0; });
  const double delta = integrate([](double w) { return w; }) / z0;
  const double c2 = integrate([&](double w) { return (w - delta) * (w - delta); }) / z0;
  cm.var = c2 * cap.s2 * cap.s2;
  return cm;
}

// Var ||sum_{j<n} v_j||^2 for one head. Write sum v_j = X u + sum r_j w_j with X = sum x_j, so
//   Q = ||sum v_j||^2 = X^2 + A + B,  A = sum s_j,  B = sum_{i != j} r_i r_j <w_i, w_j>.
// B has mean 0 and is uncorrelated with X^2 + A (E<w_i,w_j> = 0 given everything else); the
// products <w_i,w_j> of distinct pairs are uncorrelated and E<w_i,w_j>^2 = 1/(k-1), so
//   Var B = 2 n (n-1) (E s)^2 / (k-1).
// With x_j = a + y_j, X^2 + A = const + W,  W = 2 n a Y + Y^2 + Z  (Y = sum y_j, Z = sum z_j), and
// E Y^2 = n c2, E Y^3 = n c3, E Y^4 = n c4 + 3 n(n-1) c2^2, E YZ = n E[yz], E Y^2 Z = n E[y^2 z]:
//   Var W = 4 n^3 a^2 c2 + 4 n^2 a (c3 + E[yz]) + n (c4 - 3 c2^2 + Var s + 2 E[y^2 z]) + 2 n^2 c2^2.
// The output is the mean, o = sum / n, hence the 1/n^4.
double pair_norm_sq_var(const PairMoments& pm, double n, int k) {
  const double var_w = 4.0 * n * n * n * pm.a * pm.a * pm.c2 + 4.0 * n * n * pm.a * (pm.c3 + pm.e_ys) +
                       n * (pm.c4 - 3.0 * pm.c2 * pm.c2 + pm.s_var + 2.0 * pm.e_y2z) + 2.0 * n * n * pm.c2 * pm.c2;
  const double var_b = 2.0 * n * (n - 1.0) * pm.s_mean * pm.s_mean / (k - 1);
  return (var_w + var_b) / (n * n * n * n);
}

// pair_norm_sq_var with s = 1 - x^2: z = -2 a y - (y^2 - c2) gives E[yz] = -2 a c2 - c3,
// Var s = 4a^2 c2 + 4a c3 + c4 - c2^2, E[y^2 z] = -2a c3 - c4 + c2^2, and Var W collapses to
// 4 a^2 c2 n (n-1)^2 + 2 c2^2 n (n-1) (c3 and c4 cancel exactly; zero at n = 1 as ||v|| = 1).
double cap_norm_sq_var(const CapMoments& cm, double n, int k) {
  const double a2 = cm.mean * cm.mean;
  const double var_w = n * (n - 1.0) * (4.0 * a2 * cm.var * (n - 1.0) + 2.0 * cm.var * cm.var);
  const double var_b = 2.0 * n * (n - 1.0) * cm.r2_mean * cm.r2_mean / (k - 1);
  return (var_w + var_b) / (n * n * n * n);
}

double poisson_sum(double lambda, const std::function<double(long)>& f) {
  if (!(lambda >= 0.0) || !std::isfinite(lambda)) fail("poisson_sum", "needs a finite mean >= 0, got %1%", lambda);
  if (lambda == 0.0) return f(0);
  constexpr double kTail = 1e-20;
  const bm::poisson_distribution<double, MathPolicy> pois(lambda);
  const long lo = static_cast<long>(bm::quantile(pois, kTail));
  const long hi = static_cast<long>(bm::quantile(bm::complement(pois, kTail)));
  const long mode = std::clamp(static_cast<long>(std::floor(lambda)), lo, hi);
  const double w_mode = bm::pdf(pois, static_cast<double>(mode));
  double sum = w_mode * f(mode);
  double w = w_mode;
  for (long j = mode + 1; j <= hi; ++j) {
    w *= lambda / static_cast<double>(j);
    sum += w * f(j);
  }
  w = w_mode;
  for (long j = mode - 1; j >= lo; --j) {
    w *= static_cast<double>(j + 1) / lambda;
    sum += w * f(j);
  }
  return sum;
}

// Y = sum of Poisson(nc/2)-many extra pairs of dof: E sqrt(chi^2_nu) = sqrt(2) G(nu/2+1/2)/G(nu/2).
double ncchi_sqrt_mean(double dof, double nc) {
  return poisson_sum(0.5 * nc,
                     [&](long j) { return std::sqrt(2.0) / bm::tgamma_delta_ratio(0.5 * dof + j, 0.5, MathPolicy()); });
}

// E[Z1/||Z||] = exp(-eta^2/2) E_0[(Z1/||Z||) e^(eta Z1)] under the central law; expanding the
// exponential, with Z = rho omega (rho, omega independent), only odd powers survive:
//   E cos = sum_j Pois(j; eta^2/2) * eta/sqrt(2) * G(dof/2 + j + 1/2) / G(dof/2 + j + 1).
// (dof = 1 gives erf(eta/sqrt 2), the mean of sign(Z1).)
double gauss_cos_mean(double dof, double eta) {
  return poisson_sum(0.5 * eta * eta, [&](long j) {
    return eta / std::sqrt(2.0) * bm::tgamma_delta_ratio(0.5 * dof + j + 0.5, 0.5, MathPolicy());
  });
}

// Derivation. Standardise A = sigma sqrt(n0) a, S = sigma sqrt(m) b with m = nt - n0, so per
// coordinate i the pair (a_i, b_i) is N(g mu_i/sigma, I_2), g = (sqrt n0, sqrt m), independent
// across i. Then (nt^2 n0 / sigma^2) (||A/n0||^2 - ||(A+S)/nt||^2) = sum_i (a_i, b_i) M (a_i, b_i)^T,
//   M = [[nt^2 - n0^2, -n0 sqrt(n0 m)], [-n0 sqrt(n0 m), -n0 m]],  det M = -n0 m nt^2 < 0.
// Rotating each pair onto M's eigenvectors e1 (lambda1 > 0), e2 (lambda2 < 0) keeps unit
// covariance, so the form is lambda1 X1 - |lambda2| X2 with X1, X2 independent noncentral
// chi^2_dof with noncentralities delta_i = snr2 (e_i . g)^2. The event is
//   B = X1 / (X1 + X2) > x0 = |lambda2| / (lambda1 + |lambda2|),
// B doubly noncentral beta(dof/2, dof/2; delta1, delta2). Writing the noncentral chi^2 with the
// smaller delta as a Poisson(delta/2) mixture of central chi^2_{dof+2j} leaves a singly
// noncentral beta per term (Boost's non_central_beta, which sums the other Poisson series), so
//   P = sum_j Pois(j; delta_small/2) P(NCBeta(...) on the event side),
// and the complement is the same sum of complementary CDFs (never formed as 1 - P). For
// mu = 0 both deltas vanish and P = I_{1-x0}(dof/2, dof/2) = ibetac(dof/2, dof/2, x0).
// n0 = nt gives M = 0: the two outputs coincide and the strict event has probability 0.
BeatsProb gauss_beats_prob(int dof, double snr2, double n0, double nt) {
  const double m = nt - n0;
  if (!(m > 0.0)) return {0.0, 1.0};
  const double p = nt * nt - n0 * n0, q = -n0 * std::sqrt(n0 * m), r = -n0 * m;
  const double lambda1 = 0.5 * (p + r) + std::hypot(0.5 * (p - r), q);
  const double lambda2_abs = n0 * m * nt * nt / lambda1;  // |det| / lambda1, no cancellation
  // e1 from the second row of (M - lambda1 I) e = 0: e1 ~ (lambda1 - r, q), both terms exact-sign.
  const double e1n = std::hypot(lambda1 - r, q);
  const double e1x = (lambda1 - r) / e1n, e1y = q / e1n;
  const double gx = std::sqrt(n0), gy = std::sqrt(m);
  const double proj1 = e1x * gx + e1y * gy, proj2 = -e1y * gx + e1x * gy;
  const double delta1 = snr2 * proj1 * proj1, delta2 = snr2 * proj2 * proj2;
  const double x0 = lambda2_abs / (lambda1 + lambda2_abs), y0 = lambda1 / (lambda1 + lambda2_abs);
  const double half = 0.5 * dof;

  // Expand the chi^2 with the smaller noncentrality; the other stays noncentral inside V.
  const bool sum_over_x2 = delta2 <= delta1;
  const double nc = sum_over_x2 ? delta1 : delta2;
  const double cut = sum_over_x2 ? x0 : y0;
  auto term = [&](long j, bool want_event) {
    // V = X_nc / (X_nc + X_central_j) ~ beta(half, half + j) with noncentrality nc.
    // sum_over_x2: event is V > x0.  Otherwise V = X2/(X2+X1_j) and the event is V < y0.
    const bool event_is_upper = sum_over_x2;
    const bool upper = want_event == event_is_upper;
    if (nc == 0.0) {
      return upper ? bm::ibetac(half, half + j, cut, MathPolicy()) : bm::ibeta(half, half + j, cut, MathPolicy());
    }
    const bm::non_central_beta_distribution<double, MathPolicy> ncb(half, half + j, nc);
    return upper ? bm::cdf(bm::complement(ncb, cut)) : bm::cdf(ncb, cut);
  };
  const double small = 0.5 * (sum_over_x2 ? delta2 : delta1);
  BeatsProb out{};
  out.p = std::clamp(poisson_sum(small, [&](long j) { return term(j, true); }), 0.0, 1.0);
  out.q = std::clamp(poisson_sum(small, [&](long j) { return term(j, false); }), 0.0, 1.0);
  return out;
}

}  // namespace p0sim::theory::detail
