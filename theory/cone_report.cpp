#include "theory/cone_report.hpp"

#include <boost/math/distributions/binomial.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "common/format.hpp"

namespace p0sim::theory {
namespace {

constexpr double kLevel = 0.99;

std::string opt_num(bool used, double v) { return used ? fmt17(v) : std::string(); }

bool is_probability(Quantity q) { return q == Quantity::p0_beats_t_prob || q == Quantity::p0_largest_prob; }

// z of the closed form against the estimate. For a probability the standard error is taken at
// the closed form, sqrt(cf (1 - cf) / n) (the score test), since the sample's is 0 whenever all
// trials agree (e.g. P = 1 - 2e-7 and 20000 successes). The error is floored at 1e-12 of the
// quantity's scale (`scale`), so a zero-variance estimate that agrees up to double rounding
// (||o_0||^2 = 1 in the cap) reads z ~ 0 rather than 1e-16 / 1e-17.
double z_score(Quantity q, const RunningStats& s, double cf, double scale) {
  const double mean = s.mean;
  double se = is_probability(q) ? std::sqrt(std::max(0.0, cf * (1.0 - cf)) / static_cast<double>(s.n)) : s.std_error();
  se = std::max(se, 1e-12 * scale);
  if (se > 0.0) return (mean - cf) / se;
  if (mean == cf) return 0.0;
  return mean > cf ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

// The scale of quantity q at (p, t) for the rounding floor above.
double quantity_scale(const ConePoint& p, int t, Quantity q) {
  const double msq = closed_form(p, t, Quantity::norm_sq_mean).value_or(1.0);
  switch (q) {
    case Quantity::norm_sq_mean:
      return msq;
    case Quantity::norm_sq_var:
      return msq * msq;
    case Quantity::norm_mean:
    case Quantity::p0_gap:
      return std::sqrt(closed_form(p, 0, Quantity::norm_sq_mean).value_or(1.0));
    default:
      return 1.0;
  }
}

std::string params_text(const ConePoint& p) {
  char buf[96];
  switch (p.model) {
    case ValueModel::axis:
      std::snprintf(buf, sizeof buf, "mu=%g sigma=%g", p.mu, p.sigma);
      break;
    case ValueModel::cap:
      std::snprintf(buf, sizeof buf, "theta=%.4g", p.theta);
      break;
    case ValueModel::gauss:
      std::snprintf(buf, sizeof buf, "m=%g sigma=%g", p.m, p.sigma);
      break;
    case ValueModel::count:
      buf[0] = '\0';
      break;
  }
  return buf;
}

}  // namespace

std::string cone_csv_header() {
  return "model,mask,d,T,t,theta,mu,sigma,m,heads,quantity,closed_form,mc_mean,mc_ci99_low,mc_ci99_high,z,trials,"
         "seed\n";
}

void write_cone_csv_rows(std::ostream& out, const ConePoint& p, const McResult& mc, std::int64_t trials,
                         std::uint64_t seed) {
  const bool cap = p.model == ValueModel::cap, axis = p.model == ValueModel::axis, gauss = p.model == ValueModel::gauss;
  // Streamed field by field (no long std::string + chains: GCC 12 -Wrestrict false positives).
  auto row = [&](int t, Quantity q, const RunningStats* s) {
    out << enum_name(p.model) << ',' << enum_name(p.mask) << ',' << p.d << ',' << p.T << ',' << t << ','
        << opt_num(cap, p.theta) << ',' << opt_num(axis, p.mu) << ',' << opt_num(axis || gauss, p.sigma) << ','
        << opt_num(gauss, p.m) << ',' << p.heads << ',' << enum_name(q) << ',';
    const std::optional<double> cf = closed_form(p, t, q);
    if (cf) out << fmt17(*cf);
    out << ',';
    if (s != nullptr) {
      double low, high;
      if (q == Quantity::p0_beats_t_prob || q == Quantity::p0_largest_prob) {
        // A proportion: the exact Clopper-Pearson interval stays inside [0, 1] and is not empty
        // when every trial agrees, where the Student-t interval would be [1, 1] or cross 1.
        using Binomial = boost::math::binomial_distribution<double, MathPolicy>;
        const double n = static_cast<double>(s->n), k = std::round(s->mean * n);
        low = Binomial::find_lower_bound_on_p(n, k, (1.0 - kLevel) / 2);
        high = Binomial::find_upper_bound_on_p(n, k, (1.0 - kLevel) / 2);
      } else {
        const double hw = s->ci_half_width(kLevel);
        low = s->mean - hw;
        high = s->mean + hw;
      }
      out << fmt17(s->mean) << ',' << fmt17(low) << ',' << fmt17(high) << ',';
      if (cf) out << fmt17(z_score(q, *s, *cf, quantity_scale(p, t, q)));
    } else {
      out << ",,,";
    }
    out << ',' << trials << ',' << seed << '\n';
  };
  constexpr Quantity per_t[] = {Quantity::norm_sq_mean,  Quantity::norm_sq_var, Quantity::norm_mean,
                                Quantity::cos_axis_mean, Quantity::p0_gap,      Quantity::p0_beats_t_prob};
  for (std::size_t i = 0; i < mc.positions.size(); ++i)
    for (Quantity q : per_t) row(mc.positions[i], q, &mc.stats[i][static_cast<int>(q)]);
  if (!mc.positions.empty()) {
    row(p.T - 1, Quantity::p0_largest_prob, &mc.stats[0][static_cast<int>(Quantity::p0_largest_prob)]);
    row(p.T - 1, Quantity::p0_largest_union_bound, nullptr);
  }
}

std::string cone_table_header() {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-5s %-13s %5s %5s %3s %-18s %5s %11s %11s %9s %8s %8s %8s %8s %6s\n", "model",
                "mask", "d", "T", "H", "params", "t", "gap_cf", "gap_mc", "+-ci99", "beat_cf", "beat_mc", "largest",
                "bound", "max|z|");
  return buf;
}

std::string cone_table_rows(const ConePoint& p, const McResult& mc) {
  if (mc.positions.empty()) return "";
  double zmax = 0.0;
  for (std::size_t i = 0; i < mc.positions.size(); ++i) {
    for (Quantity q : kAllQuantities) {
      const RunningStats& s = mc.stats[i][static_cast<int>(q)];
      if (s.n < 2) continue;
      const auto cf = closed_form(p, mc.positions[i], q);
      if (cf) zmax = std::max(zmax, std::fabs(z_score(q, s, *cf, quantity_scale(p, mc.positions[i], q))));
    }
  }
  const double largest = mc.stats[0][static_cast<int>(Quantity::p0_largest_prob)].mean;
  const auto bound = closed_form(p, p.T - 1, Quantity::p0_largest_union_bound);
  std::string out;
  for (std::size_t i = 0; i < mc.positions.size(); ++i) {
    const int t = mc.positions[i];
    const bool shown = (p.T == 1 && t == 0) || (p.T > 1 && (t == 1 || t == p.T - 1));
    if (!shown) continue;
    const RunningStats& gap = mc.stats[i][static_cast<int>(Quantity::p0_gap)];
    const RunningStats& beat = mc.stats[i][static_cast<int>(Quantity::p0_beats_t_prob)];
    const auto gap_cf = closed_form(p, t, Quantity::p0_gap);
    const auto beat_cf = closed_form(p, t, Quantity::p0_beats_t_prob);
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%-5s %-13s %5d %5d %3d %-18s %5d %11.5g %11.5g %9.2g %8.4g %8.4g %8.4g %8.4g %6.2f\n",
                  enum_name(p.model).c_str(), enum_name(p.mask).c_str(), p.d, p.T, p.heads, params_text(p).c_str(), t,
                  gap_cf ? *gap_cf : std::nan(""), gap.mean, gap.ci_half_width(kLevel),
                  beat_cf ? *beat_cf : std::nan(""), beat.mean, largest, bound ? *bound : std::nan(""), zmax);
    out += buf;
  }
  return out;
}

}  // namespace p0sim::theory
