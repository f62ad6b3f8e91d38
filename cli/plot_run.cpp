// `p0sim plot RUN_DIR`: a training run's emergence curves, per-head attention to key 0, and the
// final probe's attention patterns and norms by position.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cli/plots.hpp"
#include "common/errors.hpp"
#include "sim/npy.hpp"

namespace p0sim::cli::plot {

void check_trace(const Table& trace) {
  for (const char* col : {"step", "layer", "p0_norm_ratio", "p0_cos", "sink_rate", "attn_to_0", "attn_to_1"})
    if (!trace.has(col)) throw UsageError("DIR", "'" + trace.path.string() + "' has no column '" + col + "'");
  if (trace.rows.empty()) throw UsageError("DIR", "'" + trace.path.string() + "' holds no probe rows");
}

std::vector<std::string> plot_run(const fs::path& dir, const Table& trace, const fs::path& out) {
  std::vector<std::string> made;
  std::vector<double> layers;
  for (std::size_t r = 0; r < trace.rows.size(); ++r) layers.push_back(trace.number(r, "layer"));
  layers = sorted_unique(layers);

  // Per-layer emergence curves: one panel per metric, one line per layer.
  struct Metric {
    const char* column;
    const char* title;
  };
  const Metric metrics[] = {{"p0_norm_ratio", "P0 norm ratio ||h_0|| / median_t ||h_t||"},
                            {"p0_cos", "P0 direction: mean pairwise cosine of h_0"},
                            {"sink_rate", "sink rate (heads with attention to key 0 > eps)"},
                            {"attn_to_0", "attention to key 0 (mean over heads)"},
                            {"attn_to_1", "attention to key 1 (mean over heads)"},
                            {"accuracy", "task accuracy at active queries (probe batch)"}};
  Figure fig = make_figure("emergence", "Emergence over training: " + dir.filename().string(), 3);
  for (const Metric& m : metrics) {
    if (!trace.has(m.column)) continue;
    Panel p = make_panel(m.title, "training step", m.column);
    const std::string col = m.column;
    if (col == "sink_rate" || col == "attn_to_0" || col == "attn_to_1" || col == "accuracy")
      p.ymin = -0.02, p.ymax = 1.02;
    if (col == "p0_cos") p.ymin = -1.02, p.ymax = 1.02;
    bool any = false;
    for (std::size_t li = 0; li < layers.size(); ++li) {
      Series s;
      s.label = std::string(m.column == std::string("accuracy") ? "all layers" : "after block ") +
                (m.column == std::string("accuracy") ? "" : std::to_string(static_cast<int>(layers[li])));
      s.color = color(li);
      for (std::size_t r = 0; r < trace.rows.size(); ++r) {
        if (trace.number(r, "layer") != layers[li]) continue;
        s.x.push_back(trace.number(r, "step"));
        s.y.push_back(trace.number(r, m.column));
        any = any || std::isfinite(s.y.back());
      }
      p.series.push_back(std::move(s));
      if (m.column == std::string("accuracy")) break;  // the same for every layer
    }
    if (any || m.column != std::string("accuracy")) fig.panels.push_back(std::move(p));
  }
  render(out, fig);
  made.push_back(fig.name);

  // Per-head attention to key 0: one panel per layer, one line per head.
  if (fs::exists(dir / "heads.csv")) {
    const Table heads = read_csv(dir / "heads.csv");
    if (heads.has("step") && heads.has("layer") && heads.has("head") && heads.has("attn_to_0") && !heads.rows.empty()) {
      std::vector<double> hs;
      for (std::size_t r = 0; r < heads.rows.size(); ++r) hs.push_back(heads.number(r, "head"));
      hs = sorted_unique(hs);
      bool active = false;
      for (std::size_t r = 0; r < heads.rows.size() && !active; ++r)
        active = std::isfinite(heads.number(r, "attn_to_0_active"));
      Figure hf = make_figure("heads_attn_to_0", "Per-head attention to key 0: " + dir.filename().string(),
                              static_cast<int>(std::min<std::size_t>(layers.size(), 3)));
      for (double l : layers) {
        Panel p = make_panel("layer " + std::to_string(static_cast<int>(l)), "training step", "attention to key 0");
        p.ymin = -0.02;
        p.ymax = 1.02;
        for (std::size_t hi = 0; hi < hs.size(); ++hi) {
          for (int pass = 0; pass < (active ? 2 : 1); ++pass) {
            Series s;
            s.label =
                "head " + std::to_string(static_cast<int>(hs[hi])) + (pass ? " (active queries)" : " (all queries)");
            s.color = color(hi);
            s.style = pass ? "lines dt 2" : "linespoints";
            for (std::size_t r = 0; r < heads.rows.size(); ++r) {
              if (heads.number(r, "layer") != l || heads.number(r, "head") != hs[hi]) continue;
              s.x.push_back(heads.number(r, "step"));
              s.y.push_back(heads.number(r, pass ? "attn_to_0_active" : "attn_to_0"));
            }
            p.series.push_back(std::move(s));
          }
        }
        hf.panels.push_back(std::move(p));
      }
      render(out, hf);
      made.push_back(hf.name);
    }
  }

  // The final probe's dump: mean attention pattern per head, norm by position per layer.
  const fs::path attn_path = dir / "probe" / "attn_mean.npy";
  if (fs::exists(attn_path)) {
    const sim::NpyArray a = sim::read_npy(attn_path);
    if (a.shape.size() != 4 || a.shape[2] != a.shape[3])
      throw UsageError("DIR", "'" + attn_path.string() + "' is not an (L,H,P,P) array");
    const auto v = a.as_float();
    const int L = static_cast<int>(a.shape[0]), H = static_cast<int>(a.shape[1]), P = static_cast<int>(a.shape[2]);
    Figure af = make_figure("attention_heatmaps",
                            "Mean attention pattern per head at the end of training (row = query, column = key)", H);
    af.panel_width = 420;
    af.panel_height = 380;
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h) {
        Panel p =
            make_panel("layer " + std::to_string(l) + ", head " + std::to_string(h), "key position", "query position");
        p.rows = p.cols = P;
        const auto* base = v.data() + (static_cast<std::ptrdiff_t>(l) * H + h) * P * P;
        p.matrix.assign(base, base + static_cast<std::ptrdiff_t>(P) * P);
        p.cb_min = 0.0;
        p.cb_max = 1.0;
        af.panels.push_back(std::move(p));
      }
    render(out, af);
    made.push_back(af.name);
  }
  const fs::path norm_path = dir / "probe" / "norm_by_position.npy";
  if (fs::exists(norm_path)) {
    const sim::NpyArray a = sim::read_npy(norm_path);
    if (a.shape.size() != 2) throw UsageError("DIR", "'" + norm_path.string() + "' is not an (L+1,P) array");
    const auto v = a.as_float();
    const int rows = static_cast<int>(a.shape[0]), P = static_cast<int>(a.shape[1]);
    Figure nf = make_figure("norm_by_position", "", 1);
    Panel p = make_panel("Hidden-state norm by position at the end of training (mean over probe rows)", "position t",
                         "mean ||h_t||");
    for (int l = 0; l < rows; ++l) {
      Series s;
      s.label = l == 0 ? "embeddings" : "after block " + std::to_string(l - 1);
      s.color = color(static_cast<std::size_t>(l));
      for (int t = 0; t < P; ++t) {
        s.x.push_back(t);
        s.y.push_back(v[static_cast<std::size_t>(l) * P + t]);
      }
      p.series.push_back(std::move(s));
    }
    nf.panels.push_back(std::move(p));
    render(out, nf);
    made.push_back(nf.name);
  }
  return made;
}

}  // namespace p0sim::cli::plot
