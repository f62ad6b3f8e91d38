#include "theory/cone.hpp"

#include <cmath>
#include <map>
#include <numbers>
#include <tuple>

#include "common/errors.hpp"
#include "common/format.hpp"
#include "theory/cone_math.hpp"

namespace p0sim::theory {

void validate(const ConePoint& p) {
  if (p.d < 2) throw UsageError("--d", "must be an integer >= 2, got " + std::to_string(p.d));
  if (p.T < 1) throw UsageError("--T", "must be an integer >= 1, got " + std::to_string(p.T));
  if (p.heads < 1) throw UsageError("--heads", "must be an integer >= 1, got " + std::to_string(p.heads));
  if (p.d % p.heads != 0 || p.d / p.heads < 2) {
    throw UsageError("--heads", "must divide d into heads of dimension >= 2, got heads=" + std::to_string(p.heads) +
                                    " for d=" + std::to_string(p.d));
  }
  switch (p.model) {
    case ValueModel::cap:
      if (!(p.theta > 0.0 && p.theta <= std::numbers::pi)) {
        throw UsageError("--theta", "must be in (0, pi] (radians), got " + fmt17(p.theta));
      }
      break;
    case ValueModel::axis:
      if (!std::isfinite(p.mu)) throw UsageError("--mu", "must be a finite number, got " + fmt17(p.mu));
      if (!(p.sigma > 0.0 && std::isfinite(p.sigma))) {
        throw UsageError("--sigma", "must be finite and > 0, got " + fmt17(p.sigma));
      }
      break;
    case ValueModel::gauss:
      if (!std::isfinite(p.m)) throw UsageError("--m", "must be a finite number, got " + fmt17(p.m));
      if (!(p.sigma > 0.0 && std::isfinite(p.sigma))) {
        throw UsageError("--sigma", "must be finite and > 0, got " + fmt17(p.sigma));
      }
      break;
    case ValueModel::count:
      throw UsageError("--model", "must be one of " + enum_names_text<ValueModel>());
  }
}

namespace {

// Every model is, per head of dimension k, "x = <v,u> along the axis plus an isotropic part of
// squared radius s in the complement". The per-head moments of (x, s) give E and Var of ||o||^2.
struct HeadLaw {
  double a;       // E x
  double c2;      // Var x
  double s_mean;  // E s
};

HeadLaw head_law(const ConePoint& p, int k) {
  switch (p.model) {
    case ValueModel::axis:
      return {p.mu, 0.0, p.sigma * p.sigma};
    case ValueModel::cap: {
      const auto cm = detail::cap_moments(k, p.theta);
      return {cm.mean, cm.var, cm.r2_mean};
    }
    case ValueModel::gauss:
      return {p.m, p.sigma * p.sigma, (k - 1) * p.sigma * p.sigma};
    case ValueModel::count:
      break;
  }
  return {};
}

// Number of value vectors averaged into o_t; o_0 and o_t are nested prefix means (o_t's prefix
// contains o_0's), so equal counts mean the very same random vector.
double count_at(const ConePoint& p, int t) { return p.mask == AttnMask::causal ? t + 1.0 : static_cast<double>(p.T); }

std::optional<double> norm_mean(const ConePoint& p, double n) {
  const int H = p.heads;
  switch (p.model) {
    case ValueModel::gauss: {
      // (n / sigma^2) ||o||^2 ~ noncentral chi^2_d with noncentrality n H m^2 / sigma^2.
      const double nc = n * H * p.m * p.m / (p.sigma * p.sigma);
      return p.sigma / std::sqrt(n) * detail::ncchi_sqrt_mean(p.d, nc);
    }
    case ValueModel::axis:
      if (n == 1.0) return std::sqrt(H * (p.mu * p.mu + p.sigma * p.sigma));
      return std::nullopt;
    case ValueModel::cap:
      if (n == 1.0) return std::sqrt(static_cast<double>(H));
      return std::nullopt;
    case ValueModel::count:
      break;
  }
  return std::nullopt;
}

std::optional<double> cos_axis_mean(const ConePoint& p, int k, double n) {
  switch (p.model) {
    case ValueModel::gauss: {
      // o sqrt(n)/sigma ~ N(eta e, I_d) along the joint unit axis e = (u_1..u_H)/sqrt(H).
      const double eta = std::sqrt(n * p.heads) * p.m / p.sigma;
      return detail::gauss_cos_mean(p.d, eta);
    }
    case ValueModel::axis:
      // n = 1: every head is mu u_h + sigma s_h, so cos = H mu / (sqrt H * sqrt(H (mu^2+sigma^2))).
      if (n == 1.0) return p.mu / std::sqrt(p.mu * p.mu + p.sigma * p.sigma);
      return std::nullopt;
    case ValueModel::cap:
      // n = 1: ||o|| = sqrt H and <o, e> = sum_h x_h / sqrt H, so cos is the mean of the x_h.
      if (n == 1.0) return detail::cap_moments(k, p.theta).mean;
      return std::nullopt;
    case ValueModel::count:
      break;
  }
  return std::nullopt;
}

std::optional<detail::BeatsProb> beats(const ConePoint& p, int k, int t) {
  const double n0 = count_at(p, 0), nt = count_at(p, t);
  switch (p.model) {
    case ValueModel::gauss:
      return detail::gauss_beats_prob(p.d, p.heads * p.m * p.m / (p.sigma * p.sigma), n0, nt);
    case ValueModel::cap:
      // ||v|| = 1 per head, so ||o_t|| < ||o_0|| unless all nt vectors coincide (probability 0).
      if (nt == n0) return detail::BeatsProb{0.0, 1.0};
      return detail::BeatsProb{1.0, 0.0};
    case ValueModel::axis: {
      if (nt == n0) return detail::BeatsProb{0.0, 1.0};
      // ||v|| is constant, so ||o_t|| = ||o_0|| exactly when every head's complement parts of
      // the nt vectors coincide: probability 0 for k >= 3, but for k = 2 the complement sphere is
      // {-1, +1} and all signs agree with probability 2^-(nt-n0) per head.
      if (k > 2) return detail::BeatsProb{1.0, 0.0};
      const double tie = std::exp2(-(nt - n0) * p.heads);
      return detail::BeatsProb{1.0 - tie, tie};
    }
    case ValueModel::count:
      break;
  }
  return std::nullopt;
}

double union_bound(const ConePoint& p, int k) {
  // The bound depends on the point only, but callers ask for it at every t: memoise per thread.
  using Key = std::tuple<int, int, int, int, int, double, double, double, double>;
  thread_local std::map<Key, double> cache;
  const Key key{static_cast<int>(p.model), static_cast<int>(p.mask), p.d, p.T, p.heads, p.theta, p.mu, p.sigma, p.m};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  double miss = 0.0;  // sum_t P(||o_t|| >= ||o_0||), each summed directly, not as 1 - P
  for (int t = 1; t < p.T && miss < 1.0; ++t) miss += beats(p, k, t)->q;
  const double bound = std::max(0.0, 1.0 - miss);
  if (cache.size() > 4096) cache.clear();
  cache.emplace(key, bound);
  return bound;
}

}  // namespace

std::optional<double> closed_form(const ConePoint& p, int t, Quantity q) {
  validate(p);
  if (t < 0 || t >= p.T) {
    throw UsageError("--positions", "position " + std::to_string(t) + " outside 0.." + std::to_string(p.T - 1));
  }
  const int k = p.d / p.heads;
  const double H = p.heads;
  const double n = count_at(p, t);
  switch (q) {
    case Quantity::norm_sq_mean: {
      // E||o||^2 = ||E v||^2 + (E||v||^2 - ||E v||^2) / n, per head, and heads add.
      const HeadLaw h = head_law(p, k);
      return H * (h.a * h.a + (h.c2 + h.s_mean) / n);
    }
    case Quantity::norm_sq_var: {
      double per_head = 0.0;
      switch (p.model) {
        case ValueModel::axis: {
          const double s = p.sigma * p.sigma;
          per_head = detail::pair_norm_sq_var({p.mu, 0.0, 0.0, 0.0, s, 0.0, 0.0, 0.0}, n, k);
          break;
        }
        case ValueModel::cap:
          per_head = detail::cap_norm_sq_var(detail::cap_moments(k, p.theta), n, k);
          break;
        case ValueModel::gauss: {
          // x ~ N(m, sigma^2) and s = sigma^2 chi^2_{k-1} independent of x.
          const double s2 = p.sigma * p.sigma;
          per_head = detail::pair_norm_sq_var(
              {p.m, s2, 0.0, 3.0 * s2 * s2, (k - 1) * s2, 2.0 * (k - 1) * s2 * s2, 0.0, 0.0}, n, k);
          break;
        }
        case ValueModel::count:
          break;
      }
      return H * per_head;  // heads are independent
    }
    case Quantity::norm_mean:
      return norm_mean(p, n);
    case Quantity::cos_axis_mean:
      return cos_axis_mean(p, k, n);
    case Quantity::p0_gap: {
      const double n0 = count_at(p, 0);
      const auto e0 = norm_mean(p, n0), et = norm_mean(p, n);
      if (e0 && et) return *e0 - *et;
      if (n0 == n) return 0.0;  // o_0 and o_t are the same random vector
      return std::nullopt;
    }
    case Quantity::p0_beats_t_prob: {
      const auto b = beats(p, k, t);
      if (!b) return std::nullopt;
      return b->p;
    }
    case Quantity::p0_largest_prob:
      return std::nullopt;  // correlated prefix means: Monte Carlo only
    case Quantity::p0_largest_union_bound:
      return union_bound(p, k);
    case Quantity::count:
      break;
  }
  return std::nullopt;
}

double cap_cos_moment(int d, double theta, int k) {
  if (k < 1 || k > 4) throw UsageError("cap_cos_moment", "moment order must be 1..4, got " + std::to_string(k));
  return detail::cap_raw_moment(d, theta, k);
}

double cap_cos_cdf(int d, double theta, double x) { return detail::cap_cdf(d, theta, x); }

double cap_cos_quantile(int d, double theta, double p) { return detail::cap_quantile(d, theta, p); }

double cap_sin2_quantile(int d, double theta, double p) { return detail::cap_quantile_draw(d, theta, p).r2; }

}  // namespace p0sim::theory
