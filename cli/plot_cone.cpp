// `p0sim plot` of `theory cone` CSVs: the norm gap of position 0 and the probability that it has
// the largest norm, closed form against Monte Carlo.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cli/plots.hpp"
#include "common/format.hpp"

namespace p0sim::cli::plot {

std::vector<std::string> plot_cone(const Table& t, const fs::path& out, const std::string& prefix) {
  // A panel per (model, mask, other parameters); a series per d.
  auto panel_key = [&](std::size_t r) {
    std::string k = t.text(r, "model") + " " + t.text(r, "mask");
    for (const char* p : {"theta", "mu", "sigma", "m", "heads"})
      if (!t.text(r, p).empty()) k += std::string(", ") + p + "=" + t.text(r, p);
    return k;
  };
  std::vector<std::string> keys;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const std::string k = panel_key(r);
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  std::vector<double> Ts;
  for (std::size_t r = 0; r < t.rows.size(); ++r) Ts.push_back(t.number(r, "T"));
  Ts = sorted_unique(Ts);
  // Versus T at the last position when T varies, else versus t at the one T.
  const bool vs_T = Ts.size() > 1;
  std::vector<std::string> made;
  for (const char* quantity : {"p0_gap", "p0_largest_prob"}) {
    const bool prob = quantity == std::string("p0_largest_prob");
    Figure f = make_figure(prefix + quantity, "", static_cast<int>(std::min<std::size_t>(keys.size(), 2)));
    bool any = false;
    for (const std::string& key : keys) {
      Panel p = make_panel(key, vs_T && !prob ? "T (position t = T-1)" : (prob ? "T" : "position t"),
                           prob ? "P(position 0 has the largest norm)" : "E||o_0|| - E||o_t||");
      p.logx = vs_T;
      if (prob) p.ymin = -0.02, p.ymax = 1.02;
      std::vector<double> ds;
      for (std::size_t r = 0; r < t.rows.size(); ++r)
        if (panel_key(r) == key && t.text(r, "quantity") == quantity) ds.push_back(t.number(r, "d"));
      ds = sorted_unique(ds);
      for (std::size_t di = 0; di < ds.size(); ++di) {
        Series cf, mc;
        cf.label = "d=" + fmt17(ds[di]) + " closed form";
        cf.style = "lines";
        cf.color = mc.color = color(di);
        mc.label = "d=" + fmt17(ds[di]) + " Monte Carlo (99% CI)";
        for (std::size_t r = 0; r < t.rows.size(); ++r) {
          if (panel_key(r) != key || t.text(r, "quantity") != quantity || t.number(r, "d") != ds[di]) continue;
          const double T = t.number(r, "T"), pos = t.number(r, "t");
          if (vs_T && !prob && pos != T - 1) continue;
          const double x = vs_T || prob ? T : pos;
          if (std::isfinite(t.number(r, "closed_form"))) {
            cf.x.push_back(x);
            cf.y.push_back(t.number(r, "closed_form"));
          }
          if (std::isfinite(t.number(r, "mc_mean"))) {
            mc.x.push_back(x);
            mc.y.push_back(t.number(r, "mc_mean"));
            mc.low.push_back(t.number(r, "mc_ci99_low"));
            mc.high.push_back(t.number(r, "mc_ci99_high"));
          }
        }
        any = any || !cf.x.empty() || !mc.x.empty();
        if (!cf.x.empty()) p.series.push_back(std::move(cf));
        if (!mc.x.empty()) p.series.push_back(std::move(mc));
      }
      f.panels.push_back(std::move(p));
    }
    if (!any) continue;
    f.title = std::string(prob ? "P(position 0 has the largest norm)" : "Norm gap of position 0") + ": " +
              t.path.filename().string();
    render(out, f);
    made.push_back(f.name);
  }
  return made;
}

}  // namespace p0sim::cli::plot
