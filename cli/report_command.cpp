// `p0sim report DIR`: one self-contained HTML file (no network, no external script or font) of a
// training run, an experiment or a sweep. This file gathers what the page shows as JSON: tables
// (cells keep their CSV text, so the page shows the files' numbers), curves and heat maps; the
// page (cli/report.html, compiled in) draws them with inline JavaScript.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/plot_table.hpp"
#include "common/engine_version.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "sim/probe_trace.hpp"
#include "sim/train.hpp"
#include "study/config_toml.hpp"
#include "study/run_options.hpp"

namespace p0sim::cli {

extern const char* const kReportTemplate;  // cli/report.html, compiled in by CMake

namespace {

using nlohmann::json;
using plot::read_csv;
using plot::Table;
namespace fs = std::filesystem;

struct ReportOptions {
  std::string input, out;
  bool force = false;
  int row = 0;
};

bool numeric(const Table& t, int col) {
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    if (!t.rows[r][static_cast<std::size_t>(col)].empty() && std::isnan(t.number(r, col))) return false;
  return !t.rows.empty();
}

json read_json(const fs::path& path) {
  try {
    return json::parse(read_text_file(path, "DIR"));
  } catch (const json::exception& e) {
    throw UsageError("DIR", "'" + path.string() + "' is not valid JSON (" + e.what() + ")");
  }
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// A table whose cells keep the CSV's text (the page formats numbers and keeps the text beside them).
json table(const std::string& id, const std::string& title, std::vector<std::string> columns,
           std::vector<std::vector<std::string>> rows, const std::string& source) {
  return {{"id", id}, {"title", title}, {"columns", columns}, {"rows", rows}, {"source", source}};
}

// A chart of series over one x axis.
json curve(const std::string& id, const std::string& title, const std::string& xlabel, std::vector<double> x,
           const std::vector<std::pair<std::string, std::vector<double>>>& series, bool log_y = false) {
  json s = json::array();
  for (const auto& [name, ys] : series) {
    json y = json::array();
    for (double v : ys) y.push_back(number_or_null(v));
    s.push_back({{"name", name}, {"y", y}});
  }
  return {{"id", id}, {"title", title}, {"xlabel", xlabel}, {"x", x}, {"series", s}, {"log_y", log_y}};
}

// A heat map of rows x cols values; hover names the row, the column and the value with these labels.
json heatmap(const std::string& id, const std::string& title, const std::string& row_name, const std::string& col_name,
             const std::string& value_name, std::vector<std::string> row_labels, std::vector<std::string> col_labels,
             const std::vector<double>& values, double lo, double hi) {
  json v = json::array();
  for (double x : values) v.push_back(number_or_null(x));
  return {{"id", id},
          {"title", title},
          {"row_name", row_name},
          {"col_name", col_name},
          {"value_name", value_name},
          {"row_labels", row_labels},
          {"col_labels", col_labels},
          {"values", v},
          {"lo", number_or_null(lo)},
          {"hi", number_or_null(hi)}};
}

std::vector<double> column_values(const Table& t, const std::string& name, const std::vector<std::size_t>& rows) {
  std::vector<double> out;
  for (std::size_t r : rows) out.push_back(t.number(r, name));
  return out;
}

std::vector<std::size_t> rows_where(const Table& t, const std::string& col, const std::string& value) {
  std::vector<std::size_t> out;
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    if (t.text(r, col) == value) out.push_back(r);
  return out;
}

std::vector<std::string> distinct(const Table& t, const std::string& col) {
  std::vector<std::string> out;
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    if (std::find(out.begin(), out.end(), t.text(r, col)) == out.end()) out.push_back(t.text(r, col));
  return out;
}

// --- a training run ------------------------------------------------------------------------------

// The attention of every layer and head, and the residual norms per position, on one probe row.
void add_forward_views(json& page, const fs::path& dir, int row) {
  study::OptionValues values;
  for (const study::TomlEntry& e : study::read_toml(dir / "config.toml", "DIR").root)
    values.set(e.key, e.text, e.where);
  sim::TrainConfig c = values.spec().train;
  c.probe.batch = std::max(c.probe.batch, 2);
  if (row < 0 || row >= c.probe.batch)
    throw UsageError("--row", "a row of the probe batch, 0.." + std::to_string(c.probe.batch - 1) + ", is accepted");
  const sim::LoadedWeights w = sim::load_weights(dir / "weights", "DIR");
  const sim::DataGenerator data(c.data);
  sim::Prober prober(c.model, data, c.probe);
  sim::Model<float> model(w.config, 1);
  model.params() = Eigen::Map<const Eigen::VectorXf>(w.params.data(), static_cast<Eigen::Index>(w.params.size()));
  const int T = c.model.seq_len, P = c.model.positions(), H = c.model.heads, L = c.model.layers, C = c.model.d_model;
  const std::int32_t* tokens = prober.rows().data() + static_cast<std::size_t>(row) * (T + 1);
  model.forward(tokens, 1);
  std::vector<std::string> labels;
  for (int t = 0; t < P; ++t) {
    const int pos = t - (c.model.bos ? 1 : 0);
    labels.push_back(pos < 0 ? std::to_string(t) + ":BOS" : std::to_string(t) + ":" + std::to_string(tokens[pos]));
  }
  const std::string input = "probe row " + std::to_string(row) + " (position:token)";
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      const float* a = model.attention(l) + static_cast<std::size_t>(h) * P * P;  // (P,P) row = query
      page["attention"].push_back(heatmap("attn_l" + std::to_string(l) + "_h" + std::to_string(h),
                                          "layer " + std::to_string(l) + ", head " + std::to_string(h), "query", "key",
                                          "weight", labels, labels, std::vector<double>(a, a + P * P), 0.0, 1.0));
    }
  std::vector<double> x;
  for (int t = 0; t < P; ++t) x.push_back(t);
  std::vector<std::pair<std::string, std::vector<double>>> norms;
  for (int l = 0; l <= L; ++l) {
    const float* h = model.hidden(l);  // (1,P,C)
    std::vector<double> n;
    for (int t = 0; t < P; ++t)
      n.push_back(
          static_cast<double>(Eigen::Map<const Eigen::VectorXf>(h + static_cast<std::size_t>(t) * C, C).norm()));
    norms.emplace_back(l == 0 ? "embeddings" : "after block " + std::to_string(l - 1), n);
  }
  page["norms"] = curve("norms", "|h_t| per position, " + input, "position", x, norms, true);
  page["input"] = input;
}

void add_run(json& page, const fs::path& dir, int row) {
  page["kind"] = "run";
  const Table train = read_csv(dir / "train.csv");
  std::vector<std::size_t> all(train.rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<double> steps = column_values(train, "step", all);
  page["curves"].push_back(
      curve("loss", "training loss", "step", steps, {{"loss", column_values(train, "loss", all)}}));
  page["curves"].push_back(curve("grad_norm", "gradient norm (before clipping)", "step", steps,
                                 {{"grad_norm", column_values(train, "grad_norm", all)}}, true));
  page["curves"].push_back(curve("lr", "learning rate", "step", steps, {{"lr", column_values(train, "lr", all)}}));

  if (fs::exists(dir / "trace.csv")) {
    const Table trace = read_csv(dir / "trace.csv");
    const std::vector<std::string> layers = distinct(trace, "layer");
    std::vector<double> probe_steps;
    for (std::size_t r : rows_where(trace, "layer", layers.front())) probe_steps.push_back(trace.number(r, "step"));
    for (std::size_t col = 2; col < trace.header.size(); ++col) {
      const std::string& name = trace.header[col];
      if (!numeric(trace, static_cast<int>(col))) continue;
      std::vector<std::pair<std::string, std::vector<double>>> series;
      const bool per_probe = name == "loss" || name == "accuracy" || name == "first_accuracy";
      for (const std::string& l : per_probe ? std::vector<std::string>{layers.front()} : layers)
        series.emplace_back(per_probe ? name : "layer " + l, column_values(trace, name, rows_where(trace, "layer", l)));
      page["probe_curves"].push_back(curve("trace_" + name, per_probe ? "probe batch " + name : name, "step",
                                           probe_steps, series, name.find("norm") != std::string::npos));
    }
    // The last probe, one row per layer, with the CSV's own text.
    const std::string last = trace.rows.back()[0];
    std::vector<std::vector<std::string>> rows;
    for (std::size_t r : rows_where(trace, "step", last)) rows.push_back(trace.rows[r]);
    page["tables"].push_back(
        table("last_probe", "last probe (step " + last + "), per layer", trace.header, rows, "trace.csv"));
  }
  if (fs::exists(dir / "heads.csv")) {
    const Table heads = read_csv(dir / "heads.csv");
    const std::vector<std::string> steps_text = distinct(heads, "step");
    std::vector<double> probe_steps;
    for (const std::string& s : steps_text) probe_steps.push_back(std::stod(s));
    for (std::size_t col = 3; col < heads.header.size(); ++col) {
      const std::string& name = heads.header[col];
      std::vector<std::pair<std::string, std::vector<double>>> series;
      for (const std::string& l : distinct(heads, "layer"))
        for (const std::string& h : distinct(heads, "head")) {
          std::vector<double> ys;
          for (std::size_t r = 0; r < heads.rows.size(); ++r)
            if (heads.text(r, "layer") == l && heads.text(r, "head") == h)
              ys.push_back(heads.number(r, static_cast<int>(col)));
          series.emplace_back("l" + l + " h" + h, ys);
        }
      page["head_curves"].push_back(curve("heads_" + name, name + " per head", "step", probe_steps, series));
    }
  }
  if (fs::exists(dir / "summary.json")) {
    const json s = read_json(dir / "summary.json");
    std::vector<std::vector<std::string>> rows;
    for (const auto& [k, v] : s.items())
      if (v.is_primitive()) rows.push_back({k, v.is_string() ? v.get<std::string>() : v.dump()});
    if (s.contains("probe") && s["probe"].contains("emergence"))
      for (const auto& [k, v] : s["probe"]["emergence"].items())
        rows.push_back({"emerged " + k, v.is_null() ? "never" : v.dump()});
    page["tables"].push_back(table("summary", "summary", {"key", "value"}, rows, "summary.json"));
  }
  if (fs::exists(dir / "weights") && fs::exists(dir / "config.toml")) add_forward_views(page, dir, row);
}

// --- experiments and sweeps ------------------------------------------------------------------------

// Heat maps of each metric's mean over seeds on the first two grid keys, one per combination of
// the other keys.
void add_grid_heatmaps(json& page, const Table& results, const std::vector<std::string>& keys) {
  const std::string xk = keys[0], yk = keys.size() > 1 ? keys[1] : "";
  const int first_metric = results.column("engine_version") + 1;
  const std::vector<std::string> xs = distinct(results, xk);
  const std::vector<std::string> ys = yk.empty() ? std::vector<std::string>{""} : distinct(results, yk);
  std::map<std::string, std::vector<std::size_t>> panels;  // the other keys' values -> rows
  for (std::size_t r = 0; r < results.rows.size(); ++r) {
    std::string rest;
    for (std::size_t k = 2; k < keys.size(); ++k)
      rest += (rest.empty() ? "" : ", ") + keys[k] + "=" + results.text(r, keys[k]);
    panels[rest].push_back(r);
  }
  for (int col = first_metric; col < static_cast<int>(results.header.size()); ++col) {
    if (!numeric(results, col)) continue;
    const std::string& metric = results.header[static_cast<std::size_t>(col)];
    for (const auto& [rest, rows] : panels) {
      std::vector<double> cells;
      for (const std::string& y : ys)
        for (const std::string& x : xs) {
          RunningStats s;
          for (std::size_t r : rows)
            if (results.text(r, xk) == x && (yk.empty() || results.text(r, yk) == y) &&
                std::isfinite(results.number(r, col)))
              s.add(results.number(r, col));
          cells.push_back(s.n > 0 ? s.mean : std::nan(""));
        }
      page["grid"].push_back(heatmap("grid_" + metric + (rest.empty() ? "" : "_" + plot::file_stem_for(rest)),
                                     metric + " (mean over seeds)" + (rest.empty() ? "" : ", " + rest),
                                     yk.empty() ? "" : yk, xk, metric, ys, xs, cells, std::nan(""), std::nan("")));
    }
  }
}

void add_experiment(json& page, const fs::path& dir) {
  page["kind"] = "experiment";
  const json v = read_json(dir / "verdict.json");
  std::vector<std::vector<std::string>> claims;
  for (const json& c : v["claims"])
    claims.push_back(
        {c["claim"].get<std::string>(), c["metric"].get<std::string>(), c["main"]["mean"].dump(),
         c["control"]["mean"].dump(),
         std::to_string(c["main"]["emerged"].get<int>()) + "/" + std::to_string(c["main"]["runs"].get<int>()),
         std::to_string(c["control"]["emerged"].get<int>()) + "/" + std::to_string(c["control"]["runs"].get<int>()),
         c["p_value"].dump(), c["supported"].get<bool>() ? "SUPPORTED" : "not supported"});
  page["tables"].push_back(
      table("verdict",
            "verdict: " + v["main"].get<std::string>() + " against " + v["control"].get<std::string>() + " (" +
                v["rule"].get<std::string>() + ")",
            {"claim", "metric", "main mean", "control mean", "main emerged", "control emerged", "Welch p", "verdict"},
            claims, "verdict.json"));
  // Each variant's metrics: mean and its interval (the verdict's, at its level).
  std::vector<std::string> columns{"metric"};
  std::vector<std::vector<std::string>> rows;
  for (const json& name : v["variant_order"]) columns.push_back(name.get<std::string>() + " mean [lo, hi]");
  const json& first = v["variants"][v["variant_order"][0].get<std::string>()]["metrics"];
  for (std::size_t i = 0; i < first.size(); ++i) {
    std::vector<std::string> row{first[i]["metric"].get<std::string>()};
    for (const json& name : v["variant_order"]) {
      const json& m = v["variants"][name.get<std::string>()]["metrics"][i];
      row.push_back(m["mean"].dump() + " [" + m["lo"].dump() + ", " + m["hi"].dump() + "]");
    }
    rows.push_back(row);
  }
  page["tables"].push_back(
      table("variants", "variants: means with " + v["level"].dump() + " intervals over " + v["seeds"].dump() + " seeds",
            columns, rows, "verdict.json"));
  const Table results = read_csv(dir / "results.csv");
  add_grid_heatmaps(page, results, {"variant"});
}

void add_sweep(json& page, const fs::path& dir) {
  page["kind"] = "sweep";
  std::vector<std::string> keys;
  for (const study::TomlEntry& e : study::read_toml(dir / "sweep.toml", "DIR").root)
    if (e.key == "grid")
      for (const std::string& item : e.items) keys.push_back(item.substr(0, item.find('=')));
  const Table results = read_csv(dir / "results.csv");
  if (keys.empty()) throw UsageError("DIR", "'" + (dir / "sweep.toml").string() + "' names no grid");
  for (const std::string& k : keys)
    if (!results.has(k)) throw UsageError("DIR", "'" + results.path.string() + "' has no column '" + k + "'");
  add_grid_heatmaps(page, results, keys);
}

void run_report(const ReportOptions& o) {
  const fs::path dir = o.input;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError("DIR", "'" + o.input + "' is not a directory");
  const fs::path out = o.out.empty() ? dir / "report.html" : fs::path(o.out);
  check_output_file("--out", out, o.force);
  json page;
  page["title"] = fs::absolute(dir).lexically_normal().string();
  page["engine_version"] = kEngineVersion;
  for (const char* list : {"tables", "curves", "probe_curves", "head_curves", "attention", "grid"})
    page[list] = json::array();
  if (fs::exists(dir / "verdict.json"))
    add_experiment(page, dir);
  else if (fs::exists(dir / "sweep.toml"))
    add_sweep(page, dir);
  else if (fs::exists(dir / "train.csv"))
    add_run(page, dir, o.row);
  else
    throw UsageError(
        "DIR", "'" + o.input + "' is not a run (train.csv), experiment (verdict.json) or sweep (sweep.toml) directory");
  // The data sits in a <script type="application/json">: "</" inside it would end the element.
  std::string data = page.dump();
  for (std::size_t at = 0; (at = data.find("</", at)) != std::string::npos; at += 3) data.replace(at, 2, "<\\/");
  std::string html = kReportTemplate;
  const std::string slot = "\"@P0SIM_REPORT_DATA@\"";
  html.replace(html.find(slot), slot.size(), data);
  write_file_atomic(out, html);
  std::cout << "wrote " << out.string() << "\n";
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  auto* sub = app.add_subcommand(
      "report", "One self-contained HTML page of a run, an experiment or a sweep: curves, attention, verdicts");
  sub->add_option("DIR", o->input, "Run directory (train.csv), experiment (verdict.json) or sweep (sweep.toml)")
      ->required();
  sub->add_option("--out", o->out, "HTML file to write (default DIR/report.html)");
  sub->add_option("--row", o->row, "Run: the probe-batch row whose attention and norms are drawn")
      ->check(CLI::Range(0, 1 << 20));
  sub->add_flag("--force", o->force, "Overwrite an existing report");
  add_config_option(*sub, [o] { run_report(*o); });
}

}  // namespace p0sim::cli
