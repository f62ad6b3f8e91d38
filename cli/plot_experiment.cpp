// `p0sim plot EXPERIMENT_DIR`: bars over seeds per variant for every metric of results.csv, the
// heatmaps of a search over options, and the ablations' bars.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli/plots.hpp"
#include "study/results.hpp"

namespace p0sim::cli::plot {

std::vector<std::string> plot_results(const Table& t, const fs::path& out) {
  std::vector<std::string> variants;  // in order of first appearance
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const std::string& v = t.text(r, "variant");
    if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
  }
  std::vector<std::string> made;
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    const std::string& name = t.header[c];
    // Identifiers and provenance, not metrics.
    if (name == "variant" || name == "seed" || name == "seed_index" || name == study::kEngineVersionColumn) continue;
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
      std::vector<double> x;
      for (std::size_t r = 0; r < t.rows.size(); ++r) {
        const double value = t.number(r, static_cast<int>(c));
        if (t.text(r, "variant") == v && std::isfinite(value)) x.push_back(value);
      }
      add_bar(p, v + " (n=" + std::to_string(x.size()) + ")", x);
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
  auto facet_of = [&](const study::ExperimentVariant& v) {
    return facet_key.empty() ? "" : facet_key + " = " + value_of(v, facet_key);
  };
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
      {"task_accuracy", "task accuracy at active queries", column("task_accuracy"), true},
      {"l1_active_attn_to_0", "max layer-1 head attention from active queries to key 0", column("l1_active_attn_to_0"),
       true},
      {"max_p0_norm_ratio", "max over layers of p0_norm_ratio",
       [&](std::size_t r) { return max_over(r, "p0_norm_ratio_l", 0); }, false},
      {"max_p0_cos", "max over layers of p0_cos", [&](std::size_t r) { return max_over(r, "p0_cos_l", 0); }, true},
      {"max_sink_rate", "max over layers >= 1 of sink_rate",
       [&](std::size_t r) { return max_over_sink_layers(t, r, "sink_rate_l"); }, true},
      {"max_attn_to_0", "max over layers >= 1 of attn_to_0",
       [&](std::size_t r) { return max_over_sink_layers(t, r, "attn_to_0_l"); }, true},
      {"emerged_identification", "fraction of seeds where identification emerged", emerged("emerged_identification"),
       true},
      {"emerged_high_norm", "fraction of seeds where the high-norm P0 emerged", emerged("emerged_high_norm"), true},
      {"emerged_sink", "fraction of seeds where the sink emerged", emerged("emerged_sink"), true},
  };
  std::vector<std::string> made;
  for (const Metric& m : metrics) {
    if (!t.has(m.name) && m.name.rfind("max_", 0) != 0) continue;
    Figure f = make_figure("heat_" + m.name, m.title + " (mean over seeds)",
                           static_cast<int>(std::min<std::size_t>(facets.size(), 3)));
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
    if (std::find(variants.begin(), variants.end(), t.text(r, "variant")) == variants.end())
      variants.push_back(t.text(r, "variant"));
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
        std::vector<double> x;
        for (std::size_t r = 0; r < t.rows.size(); ++r)
          if (t.text(r, "variant") == v && t.text(r, "component") + " " + t.text(r, "mode") == c &&
              std::isfinite(value(r)))
            x.push_back(value(r));
        add_bar(p, c, x);
        any = any || !x.empty();
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

}  // namespace p0sim::cli::plot
