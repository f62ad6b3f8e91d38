#include "study/sweep.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"
#include "common/lists.hpp"
#include "common/rng.hpp"
#include "study/jobs.hpp"

namespace p0sim::sweep {
namespace fs = std::filesystem;

std::string canonical_number(double v) { return fmt_shortest(v); }

std::pair<std::string, std::string> split_grid_spec(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw UsageError("--grid", "'" + spec + "' must be KEY=LIST (LIST: a,b,c or lo:hi:xk), e.g. d-model=16,32");
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

std::vector<std::string> split_names(const std::string& option, const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : text + ",") {
    if (ch == ' ') continue;
    if (ch != ',') {
      cur.push_back(ch);
      continue;
    }
    if (cur.empty()) throw UsageError(option, "empty value in list '" + text + "' (accepted: a,b,c)");
    out.push_back(cur);
    cur.clear();
  }
  return out;
}

GridAxis parse_axis(const std::string& key, const std::string& list, ValueKind kind,
                    const std::function<void(const std::string&)>& check) {
  const std::string option = "--grid " + key;
  GridAxis axis{key, {}};
  if (kind == ValueKind::number) {
    std::vector<double> values = parse_double_list(option, list);
    std::sort(values.begin(), values.end());
    for (double v : values) axis.values.push_back(canonical_number(v));
  } else {
    axis.values = split_names(option, list);
  }
  std::set<std::string> seen;
  for (const auto& v : axis.values) {
    if (!seen.insert(v).second) throw UsageError(option, "value '" + v + "' is listed twice in '" + list + "'");
    check(v);
  }
  return axis;
}

SweepPlan::SweepPlan(std::vector<GridAxis> axes, int seeds) : axes_(std::move(axes)), seeds_(seeds), points_(1) {
  std::sort(axes_.begin(), axes_.end(), [](const GridAxis& a, const GridAxis& b) { return a.key < b.key; });
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    if (a > 0 && axes_[a].key == axes_[a - 1].key)
      throw UsageError("--grid", "key '" + axes_[a].key + "' is given twice (put all its values in one list)");
    if (axes_[a].values.empty()) throw UsageError("--grid", "key '" + axes_[a].key + "' has no values");
    points_ *= axes_[a].values.size();
  }
  for (std::size_t r = 0; r < runs(); ++r) index_.emplace(run_id(r), r);
}

std::vector<std::string> SweepPlan::point_values(std::size_t point) const {
  std::vector<std::string> out(axes_.size());
  for (std::size_t a = axes_.size(); a-- > 0;) {
    const std::size_t n = axes_[a].values.size();
    out[a] = axes_[a].values[point % n];
    point /= n;
  }
  return out;
}

std::string SweepPlan::point_key(std::size_t point) const {
  const auto values = point_values(point);
  std::string key;
  for (std::size_t a = 0; a < axes_.size(); ++a) key += (a ? "," : "") + axes_[a].key + "=" + values[a];
  return key;
}

std::uint64_t SweepPlan::run_seed(std::uint64_t base_seed, std::size_t run) const {
  return derive_seed(base_seed, point_key(run / static_cast<std::size_t>(seeds_)),
                     run % static_cast<std::size_t>(seeds_));
}

std::string SweepPlan::run_id(std::size_t run) const {
  std::string id;
  for (const auto& v : point_values(run / static_cast<std::size_t>(seeds_))) id += v + ",";
  return id + std::to_string(run % static_cast<std::size_t>(seeds_));
}

std::optional<std::size_t> SweepPlan::index_of(const std::string& id) const {
  const auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::string SweepPlan::grid_toml() const {
  std::string out = "grid = [";
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    out += (a ? ", \"" : "\"") + axes_[a].key + "=";
    for (std::size_t v = 0; v < axes_[a].values.size(); ++v) out += (v ? "," : "") + axes_[a].values[v];
    out += "\"";
  }
  return out + "]\n";
}

ShardSpec parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto bad = [&](const std::string& why) {
    return UsageError("--shard", "'" + text + "' " + why + " (accepted: i/N with 0 <= i < N, e.g. 0/4)");
  };
  if (slash == std::string::npos) throw bad("is not of the form i/N");
  ShardSpec s;
  const std::string i = text.substr(0, slash), n = text.substr(slash + 1);
  auto parse = [&](const std::string& t, int& out) {
    const auto r = std::from_chars(t.data(), t.data() + t.size(), out);
    if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size())
      throw bad("has a part that is not a whole number");
  };
  parse(i, s.index);
  parse(n, s.count);
  if (s.count < 1 || s.count > 1000000) throw bad("needs 1 <= N <= 1000000");
  if (s.index < 0 || s.index >= s.count) throw bad("needs 0 <= i < N");
  return s;
}

std::string row_id(const std::string& row, std::size_t id_fields) {
  std::size_t pos = 0;
  for (std::size_t f = 0; f < id_fields; ++f) {
    pos = row.find(',', pos);
    if (pos == std::string::npos) return f + 1 == id_fields ? row : std::string();
    ++pos;
  }
  return row.substr(0, pos - 1);
}

// ---- journal -----------------------------------------------------------------------------------

namespace {

void write_all(int fd, const std::string& text, const fs::path& path) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RunError("cannot append to " + path.string() + ": " + std::strerror(errno));
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

Journal::Journal(fs::path path, std::string header, std::size_t id_fields, const SweepPlan& plan,
                 const std::string& option)
    : path_(std::move(path)), header_(std::move(header)), id_fields_(id_fields), plan_(plan) {
  std::string text;
  if (fs::exists(path_)) {
    std::ifstream in(path_, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // A kill while the header itself was being written leaves a prefix of it: start afresh.
  const bool torn_header = !text.empty() && text.size() < header_.size() && header_.compare(0, text.size(), text) == 0;
  std::size_t keep = 0;  // bytes of whole lines
  if (torn_header) {
    text.clear();
    std::error_code ec;
    fs::resize_file(path_, 0, ec);
    if (ec) throw RunError("cannot reset " + path_.string() + ": " + ec.message());
  } else if (!text.empty()) {
    if (text.rfind(header_, 0) != 0)
      throw UsageError(option,
                       "'" + path_.string() + "' has other columns than this sweep writes (a different sweep?)");
    std::size_t pos = header_.size();
    keep = pos;
    while (pos < text.size()) {
      const auto nl = text.find('\n', pos);
      if (nl == std::string::npos) break;  // torn last line of a killed run: dropped below
      const std::string row = text.substr(pos, nl - pos);
      const auto run = plan_.index_of(row_id(row, id_fields_));
      if (!run)
        throw UsageError(option, "'" + path_.string() + "' holds a row that is not a run of this sweep: '" +
                                     row_id(row, id_fields_) + "'");
      rows_[*run] = row;
      pos = keep = nl + 1;
    }
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw RunError("cannot open " + path_.string() + ": " + std::strerror(errno));
  if (text.empty()) {
    write_all(fd_, header_, path_);
  } else if (keep < text.size() && ::ftruncate(fd_, static_cast<off_t>(keep)) != 0) {
    throw RunError("cannot cut the torn last line of " + path_.string() + ": " + std::strerror(errno));
  }
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(std::size_t run, const std::string& row) {
  std::lock_guard<std::mutex> lock(mutex_);
  write_all(fd_, row + "\n", path_);
  rows_[run] = row;
}

void Journal::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string text = header_;
  for (const auto& [run, row] : rows_) text += row + "\n";
  write_file_atomic(path_, text);
  // The descriptor still points at the replaced file; reopen so later appends reach the new one.
  ::close(fd_);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) throw RunError("cannot reopen " + path_.string() + ": " + std::strerror(errno));
}

// ---- progress ----------------------------------------------------------------------------------

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Progress::Progress(std::size_t total, std::size_t already_done)
    : total_(total),
      done_(already_done),
      started_with_(already_done),
      tty_(::isatty(STDERR_FILENO) == 1),
      start_(now_seconds()) {}

void Progress::finished(const std::string& what, double wall_seconds) {
  ++done_;
  const double elapsed = now_seconds() - start_;
  const std::size_t fresh = done_ - started_with_;
  const double eta = fresh > 0 ? elapsed / static_cast<double>(fresh) * static_cast<double>(total_ - done_) : 0.0;
  if (tty_) {
    const int width = 30;
    const int filled = total_ > 0 ? static_cast<int>(width * done_ / total_) : width;
    std::fprintf(stderr, "\r\033[K[%s%s] %zu/%zu  ETA %.0fs  last: %s",
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), done_, total_, eta, what.c_str());
  } else {
    std::fprintf(stderr, "[%zu/%zu] %s done in %.2fs, ETA %.0fs\n", done_, total_, what.c_str(), wall_seconds, eta);
  }
  std::fflush(stderr);
}

void Progress::close() {
  if (tty_ && done_ > started_with_) std::fputc('\n', stderr);
}

// ---- pool --------------------------------------------------------------------------------------

void run_pool(const std::vector<std::size_t>& jobs, int threads, const std::function<JobResult(std::size_t)>& job,
              const std::function<void(std::size_t, const JobResult&)>& on_done) {
  // A thread's job and its on_done run back to back on that thread, so one slot per thread
  // carries the result between them.
  std::vector<JobResult> slot(static_cast<std::size_t>(std::max(1, threads)));
  study::run_jobs(
      jobs, threads,
      [&](std::size_t j, int thread) {
        const double start = now_seconds();
        JobResult& r = slot[static_cast<std::size_t>(thread)];
        r = job(j);
        r.wall_seconds = now_seconds() - start;
        r.worker = std::to_string(thread);
        r.worker.insert(0, 1, 't');  // not "t" + ...: GCC 12 -Wrestrict false positive
      },
      [&](std::size_t j, int thread) { on_done(j, slot[static_cast<std::size_t>(thread)]); });
}

}  // namespace p0sim::sweep
