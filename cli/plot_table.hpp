#pragma once
// What every kind of `p0sim plot` shares: CSV files read as tables of strings, and the small
// helpers the plotters (cli/plots.hpp) use to turn columns into series, bars and cells.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/plot_gnuplot.hpp"
#include "common/stats.hpp"

namespace p0sim::cli::plot {

namespace fs = std::filesystem;

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

// Throws UsageError("DIR", ...) when the file cannot be read; an empty file gives an empty table.
Table read_csv(const fs::path& path);

std::vector<double> sorted_unique(std::vector<double> v);
// The median of the finite values (NaN when there is none).
double median_of(std::vector<double> v);
// Colours that stay apart in print: layer or head i gets colour(i), cycling.
std::string color(std::size_t i);
// One bar: the mean of `values` with the verdict's interval (study::bootstrap_mean_interval at 95%,
// inside the values' range; no interval for a single value).
void add_bar(Panel& p, const std::string& category, const std::vector<double>& values);
// The largest finite value of row r over the per-layer columns "<prefix><l>" with l >= from_layer
// (NaN when there is none): results.csv rows of models with different depths.
double max_over_layers(const Table& t, std::size_t r, const std::string& prefix, int from_layer);
// The same over the layers the sink claim reads (sim::first_sink_layer of the row's depth).
double max_over_sink_layers(const Table& t, std::size_t r, const std::string& prefix);
// s with every character outside [A-Za-z0-9_-] replaced by '_', for a file name.
std::string file_stem_for(const std::string& s);

}  // namespace p0sim::cli::plot
