// CSV reading and the shared helpers of the plotters (plot_table.hpp).
#include "cli/plot_table.hpp"

#include "study/stats.hpp"

#include <iostream>

#include "sim/probes.hpp"
#include "study/results.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>

#include "common/errors.hpp"

namespace p0sim::cli::plot {

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        cur.push_back('"'), ++i;
      else if (c == '"')
        quoted = false;
      else
        cur.push_back(c);
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

}  // namespace

Table read_csv(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("DIR", "cannot read '" + path.string() + "'");
  Table t;
  t.path = path;
  std::string line;
  if (!std::getline(in, line)) return t;
  t.header = split_csv_line(line);
  // Results files written before a column was renamed still plot, under the new name.
  for (std::string& h : t.header)
    for (const study::RenamedColumn& r : study::renamed_columns())
      if (h == r.old_name) {
        std::cerr << "p0sim: warning: " << path.string() << ": column '" << r.old_name << "' is now called '" << r.name
                  << "' (the old name is read as the new one)\n";
        h = r.name;
      }
  while (std::getline(in, line))
    if (!line.empty()) t.rows.push_back(split_csv_line(line));
  return t;
}

std::vector<double> sorted_unique(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

double median_of(std::vector<double> v) {
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Colours that stay apart in print.
const char* const kColors[] = {"rgb \"#4477aa\"", "rgb \"#ee6677\"", "rgb \"#228833\"", "rgb \"#ccbb44\"",
                               "rgb \"#66ccee\"", "rgb \"#aa3377\"", "rgb \"#bbbbbb\"", "rgb \"#000000\""};
std::string color(std::size_t i) { return kColors[i % (sizeof kColors / sizeof kColors[0])]; }

void add_bar(Panel& p, const std::string& category, const std::vector<double>& values) {
  const study::Interval iv = study::bootstrap_mean_interval(values, 0.95);
  const bool ranged = values.size() >= 2;
  p.categories.push_back(category);
  p.bar.push_back(iv.mean);
  p.bar_low.push_back(ranged ? iv.lo : iv.mean);
  p.bar_high.push_back(ranged ? iv.hi : iv.mean);
}

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

double max_over_sink_layers(const Table& t, std::size_t r, const std::string& prefix) {
  int layers = 0;  // of this row's model: its per-layer cells that are filled
  for (std::size_t col = 0; col < t.header.size(); ++col)
    if (t.header[col].rfind(prefix, 0) == 0 && col < t.rows[r].size() && !t.rows[r][col].empty()) ++layers;
  return max_over_layers(t, r, prefix, sim::first_sink_layer(layers));
}

std::string file_stem_for(const std::string& s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_');
  return out;
}

}  // namespace p0sim::cli::plot
