#pragma once
// The kind-independent half of `p0sim sweep`: the grid (KEY=LIST axes, their canonical
// values and order), the runs it expands to (point x seed index, each with a seed derived from
// what the point is), shards, the results journal (whole lines appended under a lock, so a killed
// sweep loses only the runs in flight), the worker pool and the progress reporter. What a run
// computes (a training, a cone-model point) is a callback; sim/ and theory/ are not needed here.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace p0sim::sweep {

// One grid axis: a key and its values, as canonical text (numbers ascending and printed by
// canonical_number, strings in the order given; no duplicates).
struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};

// Shortest text that reads back as the same double; whole numbers below 1e15 print as integers,
// so "1e-3" and "0.001" (and "16" and "16.0") name the same point.
std::string canonical_number(double v);

// Splits "KEY=LIST" (throws UsageError("--grid", ...) when the '=' or either side is missing).
std::pair<std::string, std::string> split_grid_spec(const std::string& spec);

// A comma list of strings (no ranges): "a,b" -> {a, b}; empty entries are an error naming `option`.
std::vector<std::string> split_names(const std::string& option, const std::string& text);

// How a grid key's values are read: numbers (ranges allowed, sorted ascending) or names (as given).
enum class ValueKind { number, name };

// The canonical values of one axis from its LIST; `check` validates each canonical value (throws
// UsageError). A value listed twice is an error.
GridAxis parse_axis(const std::string& key, const std::string& list, ValueKind kind,
                    const std::function<void(const std::string&)>& check);

// The expanded product: axes sorted by key; points in product order (last axis fastest), each with
// seeds runs. Canonical run index = point index * seeds + seed index.
class SweepPlan {
 public:
  SweepPlan(std::vector<GridAxis> axes, int seeds);

  const std::vector<GridAxis>& axes() const { return axes_; }
  int seeds() const { return seeds_; }
  std::size_t points() const { return points_; }
  std::size_t runs() const { return points_ * static_cast<std::size_t>(seeds_); }

  // Values of point p, one per axis (axis order).
  std::vector<std::string> point_values(std::size_t point) const;
  // "k1=v1,k2=v2" in axis order: what a point is, independent of where it stands in the product.
  std::string point_key(std::size_t point) const;
  // The run's seed: derive_seed(base, point key, seed index).
  std::uint64_t run_seed(std::uint64_t base_seed, std::size_t run) const;
  // The run's identity as it appears at the front of its results row: "v1,...,vK,seed_index".
  std::string run_id(std::size_t run) const;
  // Canonical index of a run id, or nullopt if the id is not in this plan.
  std::optional<std::size_t> index_of(const std::string& run_id) const;

  // The grid as `p0sim sweep --config` accepts it back: grid = ["k1=v,v", "k2=v"].
  std::string grid_toml() const;

 private:
  std::vector<GridAxis> axes_;
  int seeds_;
  std::size_t points_;
  std::map<std::string, std::size_t> index_;
};

// --shard i/N: 0 <= i < N. Throws UsageError("--shard", ...) otherwise.
struct ShardSpec {
  int index = 0, count = 1;
  bool owns(std::size_t run) const { return run % static_cast<std::size_t>(count) == static_cast<std::size_t>(index); }
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};
ShardSpec parse_shard(const std::string& text);

// results.csv while a sweep runs: a header line, then one whole line per finished run, in finish
// order. Each line goes out in one write(2) on an O_APPEND descriptor under the journal's lock,
// so a killed process leaves whole lines and at most one torn last line, which open() cuts off.
// finish() rewrites the file atomically with the rows in canonical order.
class Journal {
 public:
  // Opens (creating with `header` when absent) `path`. An existing file must start with exactly
  // `header` (else UsageError(option, ...)); a trailing line without its newline is cut off.
  // Rows whose id (the text before the `id_fields`-th comma) is not in `plan` are an error.
  Journal(std::filesystem::path path, std::string header, std::size_t id_fields, const SweepPlan& plan,
          const std::string& option);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  bool has(std::size_t run) const { return rows_.count(run) > 0; }
  std::size_t size() const { return rows_.size(); }
  // Appends one row (without newline) for `run`; thread-safe; throws RunError on I/O failure.
  void append(std::size_t run, const std::string& row);
  // Rewrites the file: header, then the rows sorted by canonical run index.
  void finish();
  const std::map<std::size_t, std::string>& rows() const { return rows_; }

 private:
  std::filesystem::path path_;
  std::string header_;
  std::size_t id_fields_;
  const SweepPlan& plan_;
  int fd_ = -1;
  std::mutex mutex_;
  std::map<std::size_t, std::string> rows_;
};

// The id of a row: its first `id_fields` comma-separated fields.
std::string row_id(const std::string& row, std::size_t id_fields);

// One line per finished run when stderr is not a terminal; a redrawn bar with ETA when it is.
class Progress {
 public:
  Progress(std::size_t total, std::size_t already_done);
  void finished(const std::string& what, double wall_seconds);
  void close();

 private:
  std::size_t total_, done_, started_with_;
  bool tty_;
  double start_;
};

// Runs job(i) for every i in `jobs` on `threads` threads (the calling thread included), at most
// one job per thread at a time. `on_done(i, result)` runs under a lock as each job finishes.
// After the first failure no new job starts; the first failure (in `jobs` order) is rethrown once
// the running jobs end.
struct JobResult {
  std::string row;  // the results.csv row (without newline)
  double wall_seconds = 0.0;
  std::string worker;  // who ran it, for timings.csv: "t<thread>", or "r<rank>t<thread>" under MPI
};
void run_pool(const std::vector<std::size_t>& jobs, int threads, const std::function<JobResult(std::size_t)>& job,
              const std::function<void(std::size_t, const JobResult&)>& on_done);

// Seconds since an arbitrary fixed point (steady clock).
double now_seconds();

}  // namespace p0sim::sweep
