#pragma once
// The plotters of `p0sim plot`, one per kind of input; each renders its figures into `out` and
// returns their names (file stems), in the order drawn.
#include <filesystem>
#include <string>
#include <vector>

#include "cli/plot_table.hpp"
#include "study/experiment.hpp"

namespace p0sim::cli::plot {

// A training run: trace.csv must have the probe columns (check_trace throws UsageError otherwise);
// heads.csv and the final probe's dumps (probe/*.npy) are drawn when present (plot_run.cpp).
void check_trace(const Table& trace);
std::vector<std::string> plot_run(const fs::path& dir, const Table& trace, const fs::path& out);

// An experiment (plot_experiment.cpp): bars per metric column of results.csv; heatmaps when its
// variants are a search over options; bars of ablations.csv.
std::vector<std::string> plot_results(const Table& t, const fs::path& out);
std::vector<std::string> plot_search_heatmaps(const Table& t, const study::ExperimentConfig& c, const fs::path& out);
std::vector<std::string> plot_ablations(const Table& t, const fs::path& out);

// A `theory cone` CSV: closed form and Monte Carlo against T or t; `prefix` starts every figure name.
std::vector<std::string> plot_cone(const Table& t, const fs::path& out, const std::string& prefix);

// A sweep's results.csv: heatmaps over (d, T) (plot_sweep.cpp).
std::vector<std::string> plot_sweep(const Table& t, const fs::path& out);

}  // namespace p0sim::cli::plot
