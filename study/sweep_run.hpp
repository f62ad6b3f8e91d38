#pragma once
// Runs a resolved sweep into its directory: sweep.toml, the results and timings journals, the
// runs of one shard, resume, and the spread over threads or MPI ranks (study/mpi_session.hpp); and
// merges the directories of a sharded sweep. What one run computes comes with the resolved sweep
// (study/sweep_train.hpp, study/sweep_theory.hpp).
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "study/sweep.hpp"

namespace p0sim::study {

// Everything a sweep needs after validation: the plan, what one run computes, the results header
// and the resolved sweep.toml. Built identically on every MPI rank from the same arguments.
struct ResolvedSweep {
  std::unique_ptr<sweep::SweepPlan> plan;
  std::string header, toml;
  // The results row of a run after its run id; `out` is the sweep directory.
  std::function<std::string(std::size_t run, const std::filesystem::path& out)> run_row;
};

// A sweep --config with [sections] is an experiment TOML (its variants become grid values); a
// plain sweep TOML has none.
bool is_experiment_toml(const std::string& path);

struct SweepRunOptions {
  std::filesystem::path out;
  sweep::ShardSpec shard;
  int threads = 1;
  bool resume = false, force = false;
};

struct SweepRunSummary {
  bool root = true;          // false on MPI ranks other than 0, which write nothing
  std::size_t owned = 0;     // runs of this shard
  std::size_t computed = 0;  // of them, run now (the others were already in results.csv)
  double wall_seconds = 0.0;
  std::filesystem::path results;
};

// Writes DIR/sweep.toml, then every run of the shard not already in DIR/results.csv, on
// `threads` threads (and on the other ranks under mpirun). The options were checked by the caller
// except what needs the directory (a non-empty DIR without --resume or --force, a different sweep
// in it): UsageError("--out" / "--resume", ...).
SweepRunSummary run_sweep(ResolvedSweep& rs, const SweepRunOptions& o);

struct MergeSummary {
  std::size_t shards = 0, runs = 0;
  std::filesystem::path results;
};

// `p0sim sweep-merge`: the shard directories of one sweep into one whose results.csv has the
// bytes of the unsharded sweep's. Errors are UsageError("DIR" / "--out", ...).
MergeSummary merge_sweeps(const std::vector<std::string>& dirs, const std::filesystem::path& out, bool force);

}  // namespace p0sim::study
