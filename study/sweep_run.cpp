#include "study/sweep_run.hpp"

#include <iterator>
#include <map>
#include <sstream>

#include "common/engine_version.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"
#include "study/config_toml.hpp"
#include "study/mpi_session.hpp"

namespace p0sim::study {
namespace fs = std::filesystem;
using sweep::GridAxis;
using sweep::JobResult;
using sweep::SweepPlan;

namespace {

std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream ia(a), ib(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ea = !std::getline(ia, la), eb = !std::getline(ib, lb);
    if (ea && eb) return "they are equal";
    if (ea || eb || la != lb)
      return "line " + std::to_string(line) + ": '" + (ea ? std::string("(end)") : la) + "' vs '" +
             (eb ? std::string("(end)") : lb) + "'";
  }
}

// The engine version, as sweep.toml records it: rows of two engine versions never share a file.
std::string engine_line() { return "# engine_version = " + std::to_string(kEngineVersion) + "\n"; }

// The sweep's identity: sweep.toml without its shard line, equal for all shards of one sweep.
std::string sweep_identity(const std::string& toml) {
  std::istringstream in(toml);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("# shard ", 0) != 0) out += line + "\n";
  return out;
}

// The plan a sweep.toml describes (its grid and seeds), for ordering merged rows.
SweepPlan plan_from_toml(const fs::path& path) {
  const TomlDocument doc = read_toml(path, "DIR");
  std::vector<GridAxis> axes;
  int seeds = 0;
  for (const TomlEntry& e : doc.root) {
    if (e.key == "seeds" && !e.is_array) seeds = std::stoi(e.text);
    if (e.key == "grid")
      for (const auto& spec : e.is_array ? e.items : std::vector<std::string>{e.text}) {
        const auto [key, list] = sweep::split_grid_spec(spec);
        axes.push_back({key, sweep::split_names("DIR", list)});
      }
  }
  if (seeds < 1) throw UsageError("DIR", "'" + path.string() + "' names no seeds: not a sweep.toml");
  return SweepPlan(axes, seeds);
}

// Whole lines of a results file after its header (a torn last line is left out).
std::vector<std::string> body_lines(const std::string& text, const std::string& header) {
  std::vector<std::string> out;
  std::size_t pos = header.size();
  for (std::size_t nl; pos < text.size() && (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1)
    out.push_back(text.substr(pos, nl - pos));
  return out;
}

std::string first_line(const std::string& text) {
  const auto nl = text.find('\n');
  return nl == std::string::npos ? std::string() : text.substr(0, nl + 1);
}

}  // namespace

bool is_experiment_toml(const std::string& path) {
  std::istringstream in(read_text_file(path, "--config"));
  for (std::string line; std::getline(in, line);) {
    const auto b = line.find_first_not_of(" \t");
    if (b != std::string::npos && line[b] == '[') return true;
  }
  return false;
}

SweepRunSummary run_sweep(ResolvedSweep& rs, const SweepRunOptions& o) {
  rs.toml += engine_line();
  if (o.shard.count > 1) rs.toml += "# shard " + o.shard.text() + "\n";
  const SweepPlan& plan = *rs.plan;
  const fs::path& dir = o.out;
  const std::size_t id_fields = plan.axes().size() + 1;

  // Only rank 0 (or the only process) touches DIR's files; the others compute rows.
  mpi::Session session;
  std::vector<std::size_t> pending;
  std::unique_ptr<sweep::Journal> results, timings;
  SweepRunSummary summary;
  summary.root = session.is_root();
  if (session.is_root()) {
    std::error_code ec;
    const bool exists_nonempty = fs::is_directory(dir, ec) && !fs::is_empty(dir, ec);
    if (exists_nonempty && !o.resume && !o.force)
      throw UsageError(
          "--out",
          "'" + dir.string() + "' is not empty (pass --resume to continue the sweep in it, or --force to start over)");
    prepare_output_dir("--out", dir, true);
    if (exists_nonempty && o.resume && fs::exists(dir / "sweep.toml")) {
      const std::string old = read_text_file(dir / "sweep.toml", "--resume");
      if (old.find(engine_line()) == std::string::npos)
        throw UsageError("--resume", "'" + dir.string() +
                                         "' was computed by another engine version than this p0sim's (" +
                                         std::to_string(kEngineVersion) +
                                         "): its rows and new ones would not be comparable bit for bit; start a new "
                                         "--out, or --force to start over");
      if (old != rs.toml)
        throw UsageError("--resume", "'" + dir.string() + "' holds a different sweep (sweep.toml differs at " +
                                         first_difference(old, rs.toml) +
                                         "); to continue it as it was, pass --config " + (dir / "sweep.toml").string() +
                                         " with its --shard");
    }
    if (o.force)
      for (const char* name : {"results.csv", "timings.csv"}) fs::remove(dir / name, ec);
    write_file_atomic(dir / "sweep.toml", rs.toml);
    std::string timing_header;
    for (const auto& a : plan.axes()) timing_header += a.key + ",";
    timing_header += "seed_index,wall_seconds,worker\n";
    results = std::make_unique<sweep::Journal>(dir / "results.csv", rs.header, id_fields, plan, "--resume");
    timings = std::make_unique<sweep::Journal>(dir / "timings.csv", timing_header, id_fields, plan, "--resume");
    for (std::size_t r = 0; r < plan.runs(); ++r) {
      if (!o.shard.owns(r)) continue;
      ++summary.owned;
      if (!results->has(r)) pending.push_back(r);
    }
  }

  const double start = sweep::now_seconds();
  std::unique_ptr<sweep::Progress> progress;
  if (session.is_root()) progress = std::make_unique<sweep::Progress>(summary.owned, summary.owned - pending.size());
  auto job = [&](std::size_t run) { return JobResult{plan.run_id(run) + "," + rs.run_row(run, dir), 0.0, {}}; };
  auto on_done = [&](std::size_t run, const JobResult& r) {
    results->append(run, r.row);
    timings->append(run, plan.run_id(run) + "," + fmt17(r.wall_seconds) + "," + r.worker);
    const std::size_t point = run / static_cast<std::size_t>(plan.seeds());
    progress->finished((plan.point_key(point).empty() ? "base" : plan.point_key(point)) + " seed " +
                           std::to_string(run % static_cast<std::size_t>(plan.seeds())),
                       r.wall_seconds);
  };
  if (session.size() > 1) {
    session.distribute(pending, o.threads, job, on_done);
  } else {
    sweep::run_pool(pending, o.threads, job, on_done);
  }
  if (!session.is_root()) return summary;
  progress->close();
  results->finish();
  timings->finish();
  summary.computed = pending.size();
  summary.wall_seconds = sweep::now_seconds() - start;
  summary.results = dir / "results.csv";
  return summary;
}

MergeSummary merge_sweeps(const std::vector<std::string>& dirs, const fs::path& out, bool force) {
  if (dirs.empty())
    throw UsageError("DIR", "name the shard directories to merge (p0sim sweep-merge DIR_1 ... DIR_N --out DIR)");
  if (out.empty()) throw UsageError("--out", "the merged sweep directory is required");
  std::string identity, first;
  for (const auto& d : dirs) {
    const fs::path toml = fs::path(d) / "sweep.toml";
    if (!fs::is_regular_file(toml)) throw UsageError("DIR", "'" + d + "' has no sweep.toml: not a sweep directory");
    if (!fs::is_regular_file(fs::path(d) / "results.csv")) throw UsageError("DIR", "'" + d + "' has no results.csv");
    const std::string id = sweep_identity(read_text_file(toml, "DIR"));
    if (first.empty()) {
      identity = id;
      first = d;
    } else if (id != identity) {
      throw UsageError("DIR", "'" + d + "' is a shard of a different sweep than '" + first +
                                  "' (sweep.toml differs at " + first_difference(identity, id) + ")");
    }
  }
  const SweepPlan plan = plan_from_toml(fs::path(dirs.front()) / "sweep.toml");
  const std::size_t id_fields = plan.axes().size() + 1;
  std::string header, timing_header;
  std::map<std::size_t, std::string> rows, times;
  for (const auto& d : dirs) {
    for (const bool timing : {false, true}) {
      const fs::path file = fs::path(d) / (timing ? "timings.csv" : "results.csv");
      if (timing && !fs::exists(file)) continue;  // timings are informative only
      const std::string text = read_text_file(file, "DIR");
      std::string& h = timing ? timing_header : header;
      if (h.empty()) h = first_line(text);
      if (first_line(text) != h)
        throw UsageError("DIR", "'" + file.string() + "' has other columns than the first shard's");
      for (const auto& row : body_lines(text, h)) {
        const auto run = plan.index_of(sweep::row_id(row, id_fields));
        if (!run)
          throw UsageError("DIR", "'" + file.string() + "' holds a row that is not a run of the sweep: '" +
                                      sweep::row_id(row, id_fields) + "'");
        auto& target = timing ? times : rows;
        const auto [it, fresh] = target.emplace(*run, row);
        if (!fresh && it->second != row && !timing)
          throw UsageError("DIR", "run '" + sweep::row_id(row, id_fields) + "' has different results in two shards ('" +
                                      file.string() + "')");
      }
    }
  }
  if (rows.size() != plan.runs()) {
    std::size_t missing = 0;
    for (std::size_t r = 0; r < plan.runs(); ++r)
      if (!rows.count(r)) {
        missing = r;
        break;
      }
    throw UsageError("DIR", "the shards hold " + std::to_string(rows.size()) + " of the sweep's " +
                                std::to_string(plan.runs()) + " runs (missing e.g. '" + plan.run_id(missing) +
                                "'): finish the missing shard (p0sim sweep ... --shard i/N --resume) and merge again");
  }
  prepare_output_dir("--out", out, force);
  std::string text = header, ttext = timing_header;
  for (const auto& [r, row] : rows) text += row + "\n";
  for (const auto& [r, row] : times) ttext += row + "\n";
  write_file_atomic(out / "sweep.toml", identity);
  if (!ttext.empty()) write_file_atomic(out / "timings.csv", ttext);
  write_file_atomic(out / "results.csv", text);
  return {dirs.size(), rows.size(), out / "results.csv"};
}

}  // namespace p0sim::study
