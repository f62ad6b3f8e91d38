// `p0sim plot DIR`: gnuplot PNGs of a training run (trace.csv, heads.csv, probe/*.npy), of an
// experiment (results.csv) or of `p0sim theory cone` CSVs, each with its .gp script beside it.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/plot_gnuplot.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"
#include "common/stats.hpp"
#include "study/experiment.hpp"
#include "sim/npy.hpp"

namespace p0sim::cli {
namespace fs = std::filesystem;

namespace {

struct PlotOptions {
  std::string input;
  std::string out;
  bool force = false;
};

// A CSV table as strings; numbers are parsed on demand (empty or unparsable -> NaN).
struct Table {
  fs::path path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  int column(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  }
  bool has(const std::string& name) const { return column(name) >= 0; }
  double number(std::size_t row, int col) const {
    if (col < 0 || static_cast<std::size_t>(col) >= rows[row].size()) return std::nan("");
    const std::string& s = rows[row][static_cast<std::size_t>(col)];
    if (s.empty()) return std::nan("");
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() ? v : std::nan("");
  }
  double number(std::size_t row, const std::string& name) const { return number(row, column(name)); }
  const std::string& text(std::size_t row, const std::string& name) const {
    static const std::string empty;
    const int c = column(name);
    return c < 0 || static_cast<std::size_t>(c) >= rows[row].size() ? empty : rows[row][static_cast<std::size_t>(c)];
  }
};

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur.push_back('"'), ++i;
      else if (c == '"') quoted = false;
      else cur.push_back(c);
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

Table read_csv(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("DIR", "cannot read '" + path.string() + "'");
  Table t;
  t.path = path;
  std::string line;
  if (!std::getline(in, line)) return t;
  t.header = split_csv_line(line);
  while (std::getline(in, line))
    if (!line.empty()) t.rows.push_back(split_csv_line(line));
  return t;
}

bool is_cone_csv(const Table& t) {
  return t.has("model") && t.has("d") && t.has("T") && t.has("t") && t.has("quantity") && t.has("mc_mean");
}
bool is_results_csv(const Table& t) { return t.has("variant") && t.has("seed"); }

std::vector<double> sorted_unique(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// Colours that stay apart in print: layer or head i gets kColors[i % n].
const char* const kColors[] = {"rgb \"#4477aa\"", "rgb \"#ee6677\"", "rgb \"#228833\"", "rgb \"#ccbb44\"",
                               "rgb \"#66ccee\"", "rgb \"#aa3377\"", "rgb \"#bbbbbb\"", "rgb \"#000000\""};
std::string color(std::size_t i) { return kColors[i % (sizeof kColors / sizeof kColors[0])]; }

// ---- a training run -------------------------------------------------------------------------

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
    if (col == "sink_rate" || col == "attn_to_0" || col == "attn_to_1" || col == "accuracy") p.ymin = -0.02, p.ymax = 1.02;
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
      for (std::size_t r = 0; r < heads.rows.size() && !active; ++r) active = std::isfinite(heads.number(r, "attn_to_0_active"));
      Figure hf = make_figure("heads_attn_to_0", "Per-head attention to key 0: " + dir.filename().string(), static_cast<int>(std::min<std::size_t>(layers.size(), 3)));
      for (double l : layers) {
        Panel p = make_panel("layer " + std::to_string(static_cast<int>(l)), "training step", "attention to key 0");
        p.ymin = -0.02;
        p.ymax = 1.02;
        for (std::size_t hi = 0; hi < hs.size(); ++hi) {
          for (int pass = 0; pass < (active ? 2 : 1); ++pass) {
            Series s;
            s.label = "head " + std::to_string(static_cast<int>(hs[hi])) + (pass ? " (active queries)" : " (all queries)");
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
    Figure af = make_figure("attention_heatmaps", "Mean attention pattern per head at the end of training (row = query, column = key)",
                            H);
    af.panel_width = 420;
    af.panel_height = 380;
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h) {
        Panel p = make_panel("layer " + std::to_string(l) + ", head " + std::to_string(h), "key position", "query position");
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
    Panel p = make_panel("Hidden-state norm by position at the end of training (mean over probe rows)", "position t", "mean ||h_t||");
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

// One bar with its two-sided 95% Student-t interval (no interval for a single value).
void add_bar(Panel& p, const std::string& category, const RunningStats& s) {
  const double half = s.n >= 2 ? s.ci_half_width(0.95) : 0.0;
  p.categories.push_back(category);
  p.bar.push_back(s.n ? s.mean : std::nan(""));
  p.bar_low.push_back(s.n ? s.mean - half : std::nan(""));
  p.bar_high.push_back(s.n ? s.mean + half : std::nan(""));
}

// The largest finite value of row r over the per-layer columns "<prefix><l>" with l >= from_layer
// (NaN when there is none): results.csv rows of models with different depths.
double max_over_layers(const Table& t, std::size_t r, const std::string& prefix, int from_layer) {
  double m = std::nan("");
  for (std::size_t col = 0; col < t.header.size(); ++col) {
    const std::string& h = t.header[col];
    if (h.rfind(prefix, 0) != 0 || std::stoi(h.substr(prefix.size())) < from_layer) continue;
    const double x = t.number(r, static_cast<int>(col));
    if (std::isfinite(x)) m = std::isfinite(m) ? std::max(m, x) : x;
  }
  return m;
}

// ---- an experiment: results.csv --------------------------------------------------------------

std::string file_stem_for(const std::string& s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_');
  return out;
}

std::vector<std::string> plot_results(const Table& t, const fs::path& out) {
  std::vector<std::string> variants;  // in order of first appearance
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const std::string& v = t.text(r, "variant");
    if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
  }
  std::vector<std::string> made;
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    const std::string& name = t.header[c];
    if (name == "variant" || name == "seed" || name == "seed_index") continue;  // identifiers, not metrics
    // A metric column: every non-empty cell is a number and at least one is finite.
    bool numeric = true, any = false;
    for (std::size_t r = 0; r < t.rows.size() && numeric; ++r) {
      const std::string cell = c < t.rows[r].size() ? t.rows[r][c] : "";
      if (cell.empty() || cell == "nan" || cell == "NaN") continue;
      const double x = t.number(r, static_cast<int>(c));
      numeric = !std::isnan(x);
      any = any || std::isfinite(x);
    }
    if (!numeric || !any) continue;
    Panel p = make_panel(name + ": mean over seeds with 95% interval", "variant", name);
    for (const std::string& v : variants) {
      RunningStats s;
      for (std::size_t r = 0; r < t.rows.size(); ++r) {
        const double x = t.number(r, static_cast<int>(c));
        if (t.text(r, "variant") == v && std::isfinite(x)) s.add(x);
      }
      add_bar(p, v + " (n=" + std::to_string(s.n) + ")", s);
    }
    Figure f = make_figure("bars_" + file_stem_for(name), "", 1);
    f.panels.push_back(std::move(p));
    f.panel_width = std::max(640, 110 * static_cast<int>(variants.size()));
    render(out, f);
    made.push_back(f.name);
  }
  return made;
}

// A search (an experiment whose variants are the cells of a grid over a few train options, such as
// configs/search/*.toml): one heatmap per metric over the first two varying options, one panel per
// combination of the others. Returns nothing when the variants do not vary at least two options.
std::vector<std::string> plot_search_heatmaps(const Table& t, const study::ExperimentConfig& c, const fs::path& out) {
  // Each variant's value of every option it or any other variant overrides.
  std::vector<std::string> keys;
  for (const auto& v : c.variants)
    for (const auto& kv : v.overrides)
      if (std::find(keys.begin(), keys.end(), kv.first) == keys.end()) keys.push_back(kv.first);
  auto value_of = [&](const study::ExperimentVariant& v, const std::string& key) {
    return study::variant_options(c, v).get(key);
  };
  std::vector<std::string> varying;  // options that vary and are not a function of an earlier one
  for (const std::string& k : keys) {
    std::set<std::string> distinct;
    for (const auto& v : c.variants) distinct.insert(value_of(v, k));
    if (distinct.size() < 2) continue;
    // Dependent options (a batch size set from the sequence length, say) would only add empty
    // panels: drop an option whose value is fixed by the value of one already kept.
    const bool dependent = std::any_of(varying.begin(), varying.end(), [&](const std::string& j) {
      std::map<std::string, std::string> seen;
      for (const auto& v : c.variants) {
        const auto [it, fresh] = seen.emplace(value_of(v, j), value_of(v, k));
        if (!fresh && it->second != value_of(v, k)) return false;
      }
      return true;
    });
    if (!dependent) varying.push_back(k);
  }
  if (varying.size() < 2) return {};
  // Layout: one option splits panels, one the columns, and the rest (combined, "a/b") the rows.
  // Tried from the last options backwards, the first layout where every cell of the grid is one
  // variant wins: configs/search/stage_a_tasks.toml gives rows task/filler, columns weight-decay,
  // one panel per layer count. No such layout (a list of controls): bars only.
  auto joined = [&](const study::ExperimentVariant& v, const std::vector<std::string>& ks) {
    std::string s;
    for (const auto& k : ks) s += (s.empty() ? "" : "/") + value_of(v, k);
    return s;
  };
  std::string facet_key, col_key;
  std::vector<std::string> row_keys;
  auto facet_of = [&](const study::ExperimentVariant& v) { return facet_key.empty() ? "" : facet_key + " = " + value_of(v, facet_key); };
  auto row_of = [&](const study::ExperimentVariant& v) { return joined(v, row_keys); };
  auto col_of = [&](const study::ExperimentVariant& v) { return value_of(v, col_key); };
  std::vector<std::string> facets, rows, cols;  // first-appearance order
  auto note = [](std::vector<std::string>& list, const std::string& x) {
    if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
  };
  auto full_grid = [&] {
    facets.clear(), rows.clear(), cols.clear();
    std::set<std::string> cells;
    for (const auto& v : c.variants) {
      note(facets, facet_of(v));
      note(rows, row_of(v));
      note(cols, col_of(v));
      cells.insert(facet_of(v) + "\n" + row_of(v) + "\n" + col_of(v));
    }
    return cells.size() == c.variants.size() && cells.size() == facets.size() * rows.size() * cols.size();
  };
  bool found = false;
  const int n = static_cast<int>(varying.size());
  for (int f = n - 1; f >= -1 && !found; --f) {  // f = -1: no facet
    for (int col = n - 1; col >= 0 && !found; --col) {
      if (col == f) continue;
      facet_key = f >= 0 ? varying[static_cast<std::size_t>(f)] : "";
      col_key = varying[static_cast<std::size_t>(col)];
      row_keys.clear();
      for (int k = 0; k < n; ++k)
        if (k != f && k != col) row_keys.push_back(varying[static_cast<std::size_t>(k)]);
      found = !row_keys.empty() && full_grid();
    }
  }
  if (!found) return {};
  std::string row_key;
  for (const auto& k : row_keys) row_key += (row_key.empty() ? "" : "/") + k;

  // Per row of results.csv: the metric's value (NaN when the run does not have it).
  auto max_over = [&](std::size_t r, const std::string& prefix, int from_layer) {
    return max_over_layers(t, r, prefix, from_layer);
  };

  struct Metric {
    std::string name, title;
    std::function<double(std::size_t)> value;
    bool fraction;  // colour range 0..1
  };
  auto column = [&](const std::string& name) { return [&t, name](std::size_t r) { return t.number(r, name); }; };
  auto emerged = [&](const std::string& name) {
    return [&t, name](std::size_t r) { return t.text(r, name).empty() ? 0.0 : 1.0; };
  };
  const std::vector<Metric> metrics = {
      {"loss", "final probe loss", column("loss"), false},
      {"copy_accuracy", "task accuracy at active queries", column("copy_accuracy"), true},
      {"l1_active_attn_to_0", "max layer-1 head attention from active queries to key 0", column("l1_active_attn_to_0"), true},
      {"max_p0_norm_ratio", "max over layers of p0_norm_ratio", [&](std::size_t r) { return max_over(r, "p0_norm_ratio_l", 0); }, false},
      {"max_p0_cos", "max over layers of p0_cos", [&](std::size_t r) { return max_over(r, "p0_cos_l", 0); }, true},
      {"max_sink_rate", "max over layers >= 1 of sink_rate", [&](std::size_t r) { return max_over(r, "sink_rate_l", 1); }, true},
      {"max_attn_to_0", "max over layers >= 1 of attn_to_0", [&](std::size_t r) { return max_over(r, "attn_to_0_l", 1); }, true},
      {"emerged_identification", "fraction of seeds where identification emerged", emerged("emerged_identification"), true},
      {"emerged_high_norm", "fraction of seeds where the high-norm P0 emerged", emerged("emerged_high_norm"), true},
      {"emerged_sink", "fraction of seeds where the sink emerged", emerged("emerged_sink"), true},
  };
  std::vector<std::string> made;
  for (const Metric& m : metrics) {
    if (!t.has(m.name) && m.name.rfind("max_", 0) != 0) continue;
    Figure f = make_figure("heat_" + m.name, m.title + " (mean over seeds)", static_cast<int>(std::min<std::size_t>(facets.size(), 3)));
    for (const std::string& facet : facets) {
      Panel p = make_panel(facet, col_key, row_key);
      p.rows = static_cast<int>(rows.size());
      p.cols = static_cast<int>(cols.size());
      p.matrix.assign(rows.size() * cols.size(), std::nan(""));
      p.row_labels = rows;
      p.col_labels = cols;
      p.annotate = true;
      if (m.fraction) p.cb_min = 0, p.cb_max = 1;
      for (const auto& v : c.variants) {
        if (facet_of(v) != facet) continue;
        const auto ri = std::find(rows.begin(), rows.end(), row_of(v)) - rows.begin();
        const auto ci = std::find(cols.begin(), cols.end(), col_of(v)) - cols.begin();
        RunningStats s;
        for (std::size_t r = 0; r < t.rows.size(); ++r)
          if (t.text(r, "variant") == v.name && std::isfinite(m.value(r))) s.add(m.value(r));
        if (s.n) p.matrix[static_cast<std::size_t>(ri) * cols.size() + static_cast<std::size_t>(ci)] = s.mean;
      }
      f.panels.push_back(std::move(p));
    }
    const bool any = std::any_of(f.panels.begin(), f.panels.end(), [](const Panel& p) {
      return std::any_of(p.matrix.begin(), p.matrix.end(), [](double x) { return std::isfinite(x); });
    });
    if (!any) continue;  // a metric no cell has (copy accuracy on markov, say)
    f.panel_width = std::max(480, 90 * static_cast<int>(cols.size()) + 200);
    f.panel_height = std::max(360, 50 * static_cast<int>(rows.size()) + 160);
    render(out, f);
    made.push_back(f.name);
  }
  return made;
}

// An experiment's ablations.csv (runs with ablate = true): per variant, bars per ablated component
// and mode with 95% intervals over seeds, for the metrics that tell identification (accuracy,
// active-query attention to key 0) from amplification (the largest p0_norm_ratio).
std::vector<std::string> plot_ablations(const Table& t, const fs::path& out) {
  std::vector<std::string> variants, made;
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    if (std::find(variants.begin(), variants.end(), t.text(r, "variant")) == variants.end()) variants.push_back(t.text(r, "variant"));
  auto max_ratio = [&](std::size_t r) { return max_over_layers(t, r, "p0_norm_ratio_l", 0); };

  const std::vector<std::pair<std::string, std::function<double(std::size_t)>>> metrics = {
      {"accuracy", [&](std::size_t r) { return t.number(r, "accuracy"); }},
      {"l1_active_attn_to_0", [&](std::size_t r) { return t.number(r, "l1_active_attn_to_0"); }},
      {"max_p0_norm_ratio", max_ratio},
  };
  for (const std::string& v : variants) {
    std::vector<std::string> cats;  // "component mode", file order
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      if (t.text(r, "variant") != v) continue;
      const std::string c = t.text(r, "component") + " " + t.text(r, "mode");
      if (std::find(cats.begin(), cats.end(), c) == cats.end()) cats.push_back(c);
    }
    Figure f = make_figure("ablations_" + file_stem_for(v), "Ablations at the end of training: " + v, 1);
    for (const auto& [name, value] : metrics) {
      Panel p = make_panel(name + ": mean over seeds with 95% interval", "ablated component", name);
      bool any = false;
      for (const std::string& c : cats) {
        RunningStats st;
        for (std::size_t r = 0; r < t.rows.size(); ++r)
          if (t.text(r, "variant") == v && t.text(r, "component") + " " + t.text(r, "mode") == c && std::isfinite(value(r)))
            st.add(value(r));
        add_bar(p, c, st);
        any = any || st.n > 0;
      }
      if (any) f.panels.push_back(std::move(p));
    }
    if (f.panels.empty()) continue;
    f.panel_width = std::max(640, 70 * static_cast<int>(cats.size()));
    render(out, f);
    made.push_back(f.name);
  }
  return made;
}

// ---- theory cone CSVs --------------------------------------------------------------------------

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

// ---- sweeps (issue 5) ----------------------------------------------------------------------------

double median_of(std::vector<double> v) {
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Heatmaps over (d, T) of a sweep's results.csv, one panel per variant (train) or mask (theory):
// median over seeds (and over any other grid key) of the emergence step and of the final P0 norm
// ratio (the largest over layers), or of the theory's gap at t = T-1 and P(position 0 largest).
std::vector<std::string> plot_sweep(const Table& t, const fs::path& out) {
  const bool theory = t.has("p0_gap_last_mc");
  const std::string xkey = theory ? "d" : "d-model", ykey = theory ? "T" : "seq-len";
  const std::string panel_key = theory ? "mask" : "variant";
  if (!t.has(xkey) || !t.has(ykey))
    throw UsageError("DIR", "'" + t.path.string() + "' does not sweep both " + xkey + " and " + ykey + ": no (d, T) heatmap to draw");
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
    metrics.push_back({"sweep_emergence_step", "Emergence step (all three claims hold from it on; median over the seeds where it emerged, blank: none)",
                       [&](std::size_t r) { return t.number(r, "emergence_step"); }});
    metrics.push_back({"sweep_p0_norm_ratio", "Final P0 norm ratio, largest over layers (median over seeds)", [&](std::size_t r) {
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

// ---- dispatch --------------------------------------------------------------------------------

void run_plot(const PlotOptions& o) {
  if (o.input.empty()) throw UsageError("DIR", "a run, experiment or sweep directory, or a theory CSV file, is required");
  const fs::path in = o.input;
  std::error_code ec;
  if (!fs::exists(in, ec)) throw UsageError("DIR", "'" + in.string() + "' does not exist");
  const bool is_file = fs::is_regular_file(in, ec);
  const fs::path out = !o.out.empty() ? fs::path(o.out) : (is_file ? in.parent_path() / "plots" : in / "plots");

  // Decide what to draw before creating anything, so bad input leaves no empty plots directory.
  enum class Kind { run, results, cone, sweep } kind;
  std::vector<Table> cone_tables;
  Table results;  // results.csv, or a run's trace.csv
  if (is_file) {
    Table t = read_csv(in);
    if (is_cone_csv(t)) kind = Kind::cone, cone_tables.push_back(std::move(t));
    else if (is_results_csv(t)) kind = Kind::results, results = std::move(t);
    else throw UsageError("DIR", "'" + in.string() + "' is neither a `theory cone` CSV nor an experiment's results.csv");
  } else if (fs::exists(in / "trace.csv")) {
    kind = Kind::run;
    results = read_csv(in / "trace.csv");
    check_trace(results);
  } else if (fs::exists(in / "sweep.toml") && fs::exists(in / "results.csv")) {
    kind = Kind::sweep;
    results = read_csv(in / "results.csv");
    const bool theory = results.has("p0_gap_last_mc");
    if (!results.has(theory ? "d" : "d-model") || !results.has(theory ? "T" : "seq-len"))
      throw UsageError("DIR", "the sweep in '" + in.string() + "' does not vary both " + (theory ? "d and T" : "d-model and seq-len") +
                                  ": no (d, T) heatmap to draw");
  } else if (fs::exists(in / "results.csv") && is_results_csv(results = read_csv(in / "results.csv"))) {
    kind = Kind::results;
  } else {
    std::vector<fs::path> csvs;
    for (const auto& e : fs::directory_iterator(in, ec))
      if (e.is_regular_file() && e.path().extension() == ".csv") csvs.push_back(e.path());
    std::sort(csvs.begin(), csvs.end());
    for (const auto& p : csvs) {
      Table t = read_csv(p);
      if (is_cone_csv(t) && !t.rows.empty()) cone_tables.push_back(std::move(t));
    }
    if (cone_tables.empty())
      throw UsageError("DIR", "nothing to plot in '" + in.string() +
                                  "': expected trace.csv (a run with --probe-every), results.csv (an experiment) "
                                  "or `theory cone` CSV files");
    kind = Kind::cone;
  }
  if ((kind == Kind::results || kind == Kind::sweep) && results.rows.empty())
    throw UsageError("DIR", "'" + results.path.string() + "' holds no rows");
  prepare_output_dir("--out", out, o.force);

  std::vector<std::string> made;
  if (kind == Kind::run) {
    made = plot_run(in, results, out);
  } else if (kind == Kind::sweep) {
    made = plot_sweep(results, out);
    if (made.empty()) throw UsageError("DIR", "'" + results.path.string() + "' has no finite value to draw");
  } else if (kind == Kind::results) {
    made = plot_results(results, out);
    // An experiment directory keeps its config: a search over options also gets heatmaps.
    const fs::path experiment_toml = results.path.parent_path() / "experiment.toml";
    if (fs::exists(experiment_toml)) {
      const study::ExperimentConfig c = study::read_experiment_config(experiment_toml, "DIR");
      for (auto& m : plot_search_heatmaps(results, c, out)) made.push_back(std::move(m));
    }
    const fs::path ablations = results.path.parent_path() / "ablations.csv";
    if (fs::exists(ablations))
      for (auto& m : plot_ablations(read_csv(ablations), out)) made.push_back(std::move(m));
    if (made.empty()) throw UsageError("DIR", "'" + results.path.string() + "' has no numeric metric column");
  } else {
    for (const Table& t : cone_tables) {
      const std::string prefix = cone_tables.size() > 1 ? t.path.stem().string() + "_" : "";
      for (auto& m : plot_cone(t, out, prefix)) made.push_back(std::move(m));
    }
    if (made.empty()) throw UsageError("DIR", "no p0_gap or p0_largest_prob rows to plot in '" + in.string() + "'");
  }
  std::cout << "wrote " << made.size() << " plot" << (made.size() == 1 ? "" : "s") << " to " << out.string() << ":";
  for (const auto& m : made) std::cout << ' ' << m << ".png";
  std::cout << "\n";
}

}  // namespace

void add_plot_command(CLI::App& app) {
  auto o = std::make_shared<PlotOptions>();
  auto* sub = app.add_subcommand(
      "plot", "Render gnuplot PNGs (with their .gp scripts) of a run, an experiment, or theory cone CSVs");
  sub->add_option("DIR", o->input,
                  "Run directory (trace.csv), experiment directory (results.csv), directory of `theory cone` CSVs, "
                  "or one such CSV file");
  sub->add_option("--out", o->out, "Plot directory (default DIR/plots; created; must be empty unless --force)");
  sub->add_flag("--force", o->force, "Write into a non-empty plot directory, replacing its files");
  add_config_option(*sub, [o] { run_plot(*o); });
}

}  // namespace p0sim::cli
