// `p0sim plot DIR`: gnuplot PNGs of a training run (trace.csv, heads.csv, probe/*.npy), of an
// experiment (results.csv), of a sweep or of `p0sim theory cone` CSVs, each with its .gp script
// beside it. This file decides what DIR holds; the plotters are declared in cli/plots.hpp.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/plots.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "study/experiment.hpp"

namespace p0sim::cli {
namespace {

using namespace p0sim::cli::plot;

struct PlotOptions {
  std::string input;
  std::string out;
  bool force = false;
};

bool is_cone_csv(const Table& t) {
  return t.has("model") && t.has("d") && t.has("T") && t.has("t") && t.has("quantity") && t.has("mc_mean");
}
bool is_results_csv(const Table& t) { return t.has("variant") && t.has("seed"); }

void run_plot(const PlotOptions& o) {
  if (o.input.empty())
    throw UsageError("DIR", "a run, experiment or sweep directory, or a theory CSV file, is required");
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
    if (is_cone_csv(t))
      kind = Kind::cone, cone_tables.push_back(std::move(t));
    else if (is_results_csv(t))
      kind = Kind::results, results = std::move(t);
    else
      throw UsageError("DIR", "'" + in.string() + "' is neither a `theory cone` CSV nor an experiment's results.csv");
  } else if (fs::exists(in / "trace.csv")) {
    kind = Kind::run;
    results = read_csv(in / "trace.csv");
    check_trace(results);
  } else if (fs::exists(in / "sweep.toml") && fs::exists(in / "results.csv")) {
    kind = Kind::sweep;
    results = read_csv(in / "results.csv");
    const bool theory = results.has("p0_gap_last_mc");
    if (!results.has(theory ? "d" : "d-model") || !results.has(theory ? "T" : "seq-len"))
      throw UsageError("DIR", "the sweep in '" + in.string() + "' does not vary both " +
                                  (theory ? "d and T" : "d-model and seq-len") + ": no (d, T) heatmap to draw");
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
