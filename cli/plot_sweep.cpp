// `p0sim plot SWEEP_DIR`: heatmaps over (d, T) of a training or theory sweep.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cli/plots.hpp"
#include "common/errors.hpp"

namespace p0sim::cli::plot {

// Heatmaps over (d, T) of a sweep's results.csv, one panel per variant (train) or mask (theory):
// median over seeds (and over any other grid key) of the emergence step and of the final P0 norm
// ratio (the largest over layers), or of the theory's gap at t = T-1 and P(position 0 largest).
std::vector<std::string> plot_sweep(const Table& t, const fs::path& out) {
  const bool theory = t.has("p0_gap_last_mc");
  const std::string xkey = theory ? "d" : "d-model", ykey = theory ? "T" : "seq-len";
  const std::string panel_key = theory ? "mask" : "variant";
  if (!t.has(xkey) || !t.has(ykey))
    throw UsageError("DIR", "'" + t.path.string() + "' does not sweep both " + xkey + " and " + ykey +
                                ": no (d, T) heatmap to draw");
  std::vector<double> xs, ys;
  std::vector<std::string> panels;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    xs.push_back(t.number(r, xkey));
    ys.push_back(t.number(r, ykey));
    const std::string p = t.has(panel_key) ? t.text(r, panel_key) : std::string();
    if (std::find(panels.begin(), panels.end(), p) == panels.end()) panels.push_back(p);
  }
  xs = sorted_unique(xs);
  ys = sorted_unique(ys);
  std::vector<int> ratio_cols;
  for (std::size_t c = 0; c < t.header.size(); ++c)
    if (t.header[c].rfind("p0_norm_ratio_l", 0) == 0) ratio_cols.push_back(static_cast<int>(c));
  struct Metric {
    std::string name, title;
    std::function<double(std::size_t)> value;
  };
  std::vector<Metric> metrics;
  if (theory) {
    metrics.push_back({"sweep_gap", "E||o_0|| - E||o_{T-1}|| (Monte Carlo, median over seeds)",
                       [&](std::size_t r) { return t.number(r, "p0_gap_last_mc"); }});
    metrics.push_back({"sweep_p0_largest_prob", "P(position 0 has the largest norm) (median over seeds)",
                       [&](std::size_t r) { return t.number(r, "p0_largest_prob"); }});
  } else {
    metrics.push_back(
        {"sweep_emergence_step",
         "Emergence step (all three claims hold from it on; median over the seeds where it emerged, blank: none)",
         [&](std::size_t r) { return t.number(r, "emerged_all"); }});
    metrics.push_back(
        {"sweep_p0_norm_ratio", "Final P0 norm ratio, largest over layers (median over seeds)", [&](std::size_t r) {
           double m = std::nan("");
           for (int c : ratio_cols) {
             const double v = t.number(r, c);
             if (std::isfinite(v)) m = std::isfinite(m) ? std::max(m, v) : v;
           }
           return m;
         }});
  }
  auto label = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  std::vector<std::string> made;
  for (const Metric& m : metrics) {
    Figure f = make_figure(m.name, m.title, static_cast<int>(panels.size()));
    f.panel_width = 480;
    f.panel_height = 420;
    bool any = false;
    for (const std::string& panel : panels) {
      Panel p = make_panel(panel.empty() ? "" : panel_key + " " + panel, xkey, ykey);
      p.rows = static_cast<int>(ys.size());
      p.cols = static_cast<int>(xs.size());
      for (std::size_t yi = ys.size(); yi-- > 0;) {  // largest T on top
        p.row_labels.push_back(label(ys[yi]));
        for (double x : xs) {
          std::vector<double> cell;
          for (std::size_t r = 0; r < t.rows.size(); ++r)
            if (t.number(r, xkey) == x && t.number(r, ykey) == ys[yi] &&
                (panel.empty() || t.text(r, panel_key) == panel))
              cell.push_back(m.value(r));
          p.matrix.push_back(median_of(cell));
          any = any || std::isfinite(p.matrix.back());
        }
      }
      for (double x : xs) p.col_labels.push_back(label(x));
      f.panels.push_back(std::move(p));
    }
    if (!any) continue;
    render(out, f);
    made.push_back(f.name);
  }
  return made;
}

}  // namespace p0sim::cli::plot
