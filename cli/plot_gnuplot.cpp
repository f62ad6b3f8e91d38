#include "cli/plot_gnuplot.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <system_error>

#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"

namespace p0sim::cli {
namespace fs = std::filesystem;

namespace {

// A gnuplot double-quoted string literal (labels are drawn noenhanced, so '_' stays literal).
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

// gnuplot reads "NaN" as a missing point, which is what an undefined metric should be.
std::string num(double v) { return std::isfinite(v) ? fmt17(v) : std::string("NaN"); }

void write_series_block(std::ostream& o, const std::string& name, const Series& s) {
  o << name << " << EOD\n";
  const bool bars = !s.low.empty();
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    o << num(s.x[i]) << ' ' << num(s.y[i]);
    if (bars) o << ' ' << num(s.low[i]) << ' ' << num(s.high[i]);
    o << '\n';
  }
  o << "EOD\n";
}

void write_panel(std::ostream& o, const Panel& p, int index) {
  const std::string base = "$p" + std::to_string(index);
  // Every panel states all the settings it uses, so panels do not inherit each other's.
  o << "\n# panel " << index << "\n";
  o << "set title " << quote(p.title) << "\n";
  o << "set xlabel " << quote(p.xlabel) << "\nset ylabel " << quote(p.ylabel) << "\n";
  o << "unset logscale\n";
  if (p.logx) o << "set logscale x\n";
  if (p.logy) o << "set logscale y\n";
  o << "set autoscale\nset xtics autofreq norotate\nset ytics autofreq\nset grid\n";
  if (p.ymin < p.ymax) o << "set yrange [" << num(p.ymin) << ":" << num(p.ymax) << "]\n";
  if (!p.matrix.empty()) {
    o << base << " << EOD\n";
    for (int r = 0; r < p.rows; ++r) {
      for (int c = 0; c < p.cols; ++c) o << (c ? " " : "") << num(p.matrix[static_cast<std::size_t>(r) * p.cols + c]);
      o << '\n';
    }
    o << "EOD\n";
    o << "unset grid\nset xrange [-0.5:" << p.cols - 0.5 << "]\nset yrange [" << p.rows - 0.5 << ":-0.5]\n";
    if (p.cb_max > p.cb_min)
      o << "set cbrange [" << num(p.cb_min) << ":" << num(p.cb_max) << "]\n";
    else
      o << "set autoscale cb\n";
    auto tics = [&](const char* axis, const std::vector<std::string>& labels) {
      if (labels.empty()) return;
      o << "set " << axis << "tics (";
      for (std::size_t i = 0; i < labels.size(); ++i) o << (i ? ", " : "") << quote(labels[i]) << " " << i;
      o << ")\n";
    };
    tics("x", p.col_labels);
    tics("y", p.row_labels);
    o << "plot " << base << " matrix with image notitle";
    // NaN cells (a metric a cell does not have) print as "-" rather than a number.
    if (p.annotate)
      o << ", \\\n     " << base
        << " matrix using 1:2:($3 == $3 ? sprintf(\"%.2f\", $3) : \"-\") with labels font \",9\" notitle";
    o << "\n";
    o << "set autoscale\n";
    if (!p.col_labels.empty()) o << "set xtics autofreq\n";
    if (!p.row_labels.empty()) o << "set ytics autofreq\n";
    return;
  }
  if (!p.categories.empty()) {
    o << base << " << EOD\n";
    for (std::size_t i = 0; i < p.categories.size(); ++i)
      o << i << ' ' << quote(p.categories[i]) << ' ' << num(p.bar[i]) << ' ' << num(p.bar_low[i]) << ' '
        << num(p.bar_high[i]) << '\n';
    o << "EOD\n";
    o << "set style fill solid 0.5 border -1\nset boxwidth 0.6\n";
    o << "set xrange [-0.7:" << static_cast<double>(p.categories.size()) - 0.3 << "]\n";
    if (p.categories.size() > 4) o << "set xtics rotate by -30\n";
    o << "plot " << base << " using 1:3:xtic(2) with boxes lc rgb \"#4477aa\" title \"mean\", \\\n     " << base
      << " using 1:3:4:5 with yerrorbars lc rgb \"black\" pt 0 title \"95% interval (bootstrap)\"\n";
    o << "set autoscale\n";
    return;
  }
  std::vector<std::string> terms;
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    const Series& s = p.series[i];
    const std::string name = base + "s" + std::to_string(i);
    write_series_block(o, name, s);
    std::string color = s.color.empty() ? "" : " lc " + s.color;
    if (!s.low.empty())
      terms.push_back(name + " using 1:2:3:4 with yerrorbars" + color + " title " + quote(s.label));
    else
      terms.push_back(name + " using 1:2 with " + s.style + color + " title " + quote(s.label));
  }
  o << "set key below\n";
  if (terms.empty()) {
    o << "set label 1 \"no data\" at graph 0.5, graph 0.5 center\nplot NaN notitle\nunset label 1\n";
    return;
  }
  o << "plot ";
  for (std::size_t i = 0; i < terms.size(); ++i) o << (i ? ", \\\n     " : "") << terms[i];
  o << "\n";
}

}  // namespace

std::string gnuplot_script(const Figure& f) {
  const int n = static_cast<int>(f.panels.size());
  const int cols = std::max(1, std::min(f.columns, n));
  const int rows = (n + cols - 1) / cols;
  std::ostringstream o;
  o << "# p0sim plot: " << f.name << ". Redraw (and restyle) in this directory: gnuplot " << f.name << ".gp\n";
  o << "if (!exists(\"outfile\")) outfile = " << quote(f.name + ".png") << "\n";
  o << "set terminal pngcairo noenhanced size " << cols * f.panel_width << ","
    << rows * f.panel_height + (n > 1 ? 40 : 0) << " font \"sans,10\"\n";
  o << "set output outfile\n";
  o << "set palette rgb 33,13,10\n";
  if (n > 1) o << "set multiplot layout " << rows << "," << cols << " title " << quote(f.title) << " font \",13\"\n";
  for (int i = 0; i < n; ++i) {
    Panel p = f.panels[static_cast<std::size_t>(i)];
    if (n == 1 && !f.title.empty() && p.title.empty()) p.title = f.title;
    write_panel(o, p, i);
  }
  if (n > 1) o << "unset multiplot\n";
  o << "unset output\n";
  return o.str();
}

void render(const fs::path& dir, const Figure& f) {
  const std::string script = f.name + ".gp", png = f.name + ".png", temp = "." + f.name + ".png.tmp";
  write_file_atomic(dir / script, gnuplot_script(f));
  int err_pipe[2];
  if (::pipe(err_pipe) != 0) throw RunError(std::string("cannot start gnuplot: ") + std::strerror(errno));
  const std::string preset = "outfile='" + temp + "'";
  const pid_t pid = ::fork();
  if (pid < 0) throw RunError(std::string("cannot start gnuplot: ") + std::strerror(errno));
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::dup2(err_pipe[1], 2);
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, 1);
    ::close(err_pipe[0]);
    ::close(err_pipe[1]);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    ::execlp("gnuplot", "gnuplot", "-e", preset.c_str(), script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  std::string err;
  char buf[4096];
  for (;;) {
    const ssize_t k = ::read(err_pipe[0], buf, sizeof buf);
    if (k > 0)
      err.append(buf, static_cast<std::size_t>(k));
    else if (k == 0 || errno != EINTR)
      break;
  }
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::error_code ec;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fs::remove(dir / temp, ec);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      throw RunError("cannot run gnuplot (is it installed? Debian: apt-get install gnuplot-nox)");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 126)
      throw RunError("cannot enter " + dir.string() + " to run gnuplot");
    // The last non-empty line of gnuplot's stderr names the error.
    std::string line;
    std::istringstream lines(err);
    for (std::string l; std::getline(lines, l);)
      if (l.find_first_not_of(" \t^") != std::string::npos) line = l;
    throw RunError("gnuplot failed on " + (dir / script).string() + (line.empty() ? "" : ": " + line));
  }
  if (!fs::exists(dir / temp, ec) || fs::file_size(dir / temp, ec) == 0)
    throw RunError("gnuplot wrote no image for " + (dir / script).string());
  fs::rename(dir / temp, dir / png, ec);
  if (ec) throw RunError("cannot write " + (dir / png).string() + ": " + ec.message());
}

}  // namespace p0sim::cli
