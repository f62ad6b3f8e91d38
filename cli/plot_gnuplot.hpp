#pragma once
// Figures for `p0sim plot`: each figure becomes a self-contained gnuplot script (data inline as
// datablocks) written next to its PNG, so `gnuplot NAME.gp` run in that directory redraws NAME.png
// and a user can restyle it.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace p0sim::cli {

struct Series {
  std::string label;
  std::vector<double> x, y;
  std::vector<double> low, high;      // error bar ends (empty: none)
  std::string style = "linespoints";  // lines | linespoints | points (points get error bars if low/high)
  std::string color;                  // gnuplot colour spec, or empty for the default sequence
};

struct Panel {
  std::string title, xlabel, ylabel;
  std::vector<Series> series;
  bool logx = false, logy = false;
  double ymin = 0, ymax = 0;  // fixed y range when ymin < ymax (fractions: 0..1), else automatic
  // Heatmap instead of series: matrix (rows x cols), row-major, drawn with rows top to bottom.
  std::vector<double> matrix;
  int rows = 0, cols = 0;
  double cb_min = 0, cb_max = 0;                    // colour range; equal = automatic
  std::vector<std::string> row_labels, col_labels;  // tic labels (empty: indices)
  bool annotate = false;                            // print each cell's value on it (small grids such as a search's)
  // Bars instead of series: one bar per category with an error bar [low, high].
  std::vector<std::string> categories;
  std::vector<double> bar, bar_low, bar_high;
};

struct Figure {
  std::string name;   // file stem: NAME.gp and NAME.png
  std::string title;  // over all panels (multiplot)
  std::vector<Panel> panels;
  int columns = 1;  // panels per row
  int panel_width = 640, panel_height = 420;
};

inline Panel make_panel(std::string title, std::string xlabel, std::string ylabel) {
  Panel p;
  p.title = std::move(title);
  p.xlabel = std::move(xlabel);
  p.ylabel = std::move(ylabel);
  return p;
}
inline Figure make_figure(std::string name, std::string title, int columns) {
  Figure f;
  f.name = std::move(name);
  f.title = std::move(title);
  f.columns = columns;
  return f;
}

// The gnuplot script of a figure (output NAME.png unless the variable `outfile` is preset).
std::string gnuplot_script(const Figure& f);

// Writes dir/NAME.gp (atomically) and renders dir/NAME.png with gnuplot (through a temporary file
// renamed on success). Throws RunError if gnuplot is missing or fails.
void render(const std::filesystem::path& dir, const Figure& f);

}  // namespace p0sim::cli
