// `p0sim sweep` and `p0sim sweep-merge`: their options, checks and output lines. What a sweep
// computes and how it runs (grid, runs, journal, shards, threads, MPI ranks) is study/sweep*.
#include <cstdint>
#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.hpp"
#include "cli/train_options.hpp"
#include "common/errors.hpp"
#include "common/format.hpp"
#include "study/experiment.hpp"
#include "study/sweep_run.hpp"
#include "study/sweep_theory.hpp"
#include "study/sweep_train.hpp"
#include "theory/cone_mc.hpp"

namespace p0sim::cli {

namespace {

struct SweepOptions {
  std::unique_ptr<RunOptionFlags> train;  // the base point of a train sweep (and --seed, the base seed of both kinds)
  std::string config, experiment, kind = "train", shard, out;
  std::vector<std::string> grid;
  int seeds = 1, threads = 1;
  std::int64_t trials = 2000;
  bool resume = false, force = false, keep_runs = false;
};

std::string theory_keys_text() {
  std::string keys;
  for (const auto& k : study::theory_grid_keys()) keys += (keys.empty() ? "" : ", ") + k;
  return keys;
}

study::ResolvedSweep resolve_train(const SweepOptions& o) {
  study::TrainSweepSpec spec;
  if (!o.experiment.empty()) {
    spec.experiment = study::read_experiment_config(o.experiment, "--experiment");
    spec.base = spec.experiment->base;
    spec.experiment_path = o.experiment;
  }
  // Options given on the command line override the experiment's base; without an experiment the
  // defaults are the base.
  spec.base = o.train->values(spec.base);
  spec.grid = o.grid;
  spec.seeds = o.seeds;
  spec.keep_runs = o.keep_runs;
  return study::resolve_train_sweep(spec);
}

study::ResolvedSweep resolve_theory(const CLI::App& sub, const SweepOptions& o) {
  for (const CLI::Option* opt : sub.get_options()) {
    const std::string& name = opt->get_single_name();
    static const std::set<std::string> own = {"help",  "config",    "experiment", "kind",  "grid",
                                              "seeds", "threads",   "trials",     "shard", "resume",
                                              "force", "keep-runs", "out",        "seed"};
    if (opt->count() > 0 && !own.count(name))
      throw UsageError("--" + name, "is a train option; --kind theory sweeps the cone model (grid keys: " +
                                        theory_keys_text() + ")");
  }
  if (!o.experiment.empty()) throw UsageError("--experiment", "only a train sweep has variants");
  if (o.keep_runs) throw UsageError("--keep-runs", "a theory sweep has no run directories");
  return study::resolve_theory_sweep({o.grid, o.seeds, o.trials, o.train->values().get("seed")});
}

void run_sweep(const CLI::App& sub, const SweepOptions& o) {
  if (o.out.empty()) throw UsageError("--out", "a sweep directory is required");
  if (o.resume && o.force)
    throw UsageError("--resume", "cannot be combined with --force (--force starts the sweep over)");
  study::SweepRunOptions run;
  run.shard = o.shard.empty() ? sweep::ShardSpec{} : sweep::parse_shard(o.shard);
  study::ResolvedSweep rs = o.kind == "theory" ? resolve_theory(sub, o) : resolve_train(o);
  run.out = o.out;
  run.threads = o.threads;
  run.resume = o.resume;
  run.force = o.force;
  const study::SweepRunSummary s = study::run_sweep(rs, run);
  if (!s.root) return;
  std::cout << "sweep: " << s.owned << " runs"
            << (run.shard.count > 1 ? " (shard " + run.shard.text() + ")" : std::string()) << ", " << s.computed
            << " computed, " << s.owned - s.computed << " already done; " << fmt9(static_cast<float>(s.wall_seconds))
            << " s";
  if (s.computed > 0)
    std::cout << " (" << fmt9(static_cast<float>(3600.0 * static_cast<double>(s.computed) / s.wall_seconds))
              << " runs/hour)";
  std::cout << "; wrote " << s.results.string() << "\n";
}

struct MergeOptions {
  std::vector<std::string> dirs;
  std::string out;
  bool force = false;
};

void run_merge(const MergeOptions& o) {
  const study::MergeSummary s = study::merge_sweeps(o.dirs, o.out, o.force);
  std::cout << "merged " << s.shards << " shards, " << s.runs << " runs; wrote " << s.results.string() << "\n";
}

}  // namespace

void add_sweep_commands(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  auto* sub = app.add_subcommand(
      "sweep",
      "Train (or evaluate the cone model) over a grid x seeds on threads, shards or MPI ranks; one results.csv");
  o->train = std::make_unique<RunOptionFlags>(*sub, study::kEveryRun);
  sub->get_option("--seed")->description(
      "Base seed: each run's seed is derived from it, the point's key and the seed index");
  sub->add_option("--config", o->config,
                  "TOML: sweep and train options (keys without dashes, grid = [\"KEY=LIST\", ...]), or an experiment "
                  "TOML with [variants.NAME] tables (then `variant` is a grid key)")
      ->check(CLI::ExistingFile);
  sub->add_option("--experiment", o->experiment,
                  "Experiment TOML whose base and [variants.NAME] the sweep uses (grid key `variant`)")
      ->check(CLI::ExistingFile);
  sub->add_option("--kind", o->kind,
                  "train: train the model at each point; theory: the cone model (Monte Carlo + closed forms)")
      ->check(CLI::IsMember({"train", "theory"}));
  sub->add_option("--grid", o->grid,
                  "KEY=LIST, repeatable; points are the Cartesian product. KEY: a train option without dashes (or "
                  "`variant`); theory: " +
                      theory_keys_text() + " (" + enum_names_text<theory::McEstimator>() + "). LIST: a,b,c or lo:hi:xk")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            return s.find('=') == std::string::npos ? "must be KEY=LIST, e.g. d-model=16,32" : std::string();
          },
          "KEY=LIST"));
  sub->add_option("--seeds", o->seeds, "Seeds per point (seed index 0..N-1)")->check(CLI::Range(1, 100000));
  sub->add_option("--threads", o->threads, "Runs in parallel, each single-threaded (results never depend on it)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--trials", o->trials, "theory: Monte-Carlo sequences per run (>= 2)")
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{1} << 40));
  sub->add_option("--shard", o->shard,
                  "Run only the runs whose canonical index is i mod N (job arrays); merge with sweep-merge")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            try {
              sweep::parse_shard(s);
            } catch (const UsageError& e) {
              const std::string what = e.what();  // "--shard: ...": CLI11 names the option itself
              return what.substr(what.find(": ") + 2);
            }
            return {};
          },
          "i/N"));
  sub->add_flag("--resume", o->resume, "Continue the sweep in a non-empty --out: skip the runs already in results.csv");
  sub->add_flag("--keep-runs", o->keep_runs, "Also write each run's own files to DIR/runs/<point>/seed-<i>/");
  sub->add_option("--out", o->out, "Sweep directory (created; must be empty unless --resume or --force)");
  sub->add_flag("--force", o->force, "Start over in a non-empty sweep directory (replaces results.csv)");
  sub->callback([sub, o] {
    if (!o->config.empty()) {
      if (study::is_experiment_toml(o->config)) {
        if (!o->experiment.empty())
          throw UsageError("--config", "an experiment TOML given twice (--config and --experiment)");
        o->experiment = o->config;
      } else {
        apply_config_file(*sub, o->config);
      }
    }
    run_sweep(*sub, *o);
  });

  auto m = std::make_shared<MergeOptions>();
  auto* merge = app.add_subcommand("sweep-merge",
                                   "Merge the shard directories of one sweep into the results.csv of an unsharded run");
  merge->add_option("DIR", m->dirs, "Shard directories (each written by p0sim sweep --shard i/N)")
      ->check(CLI::ExistingDirectory);
  merge->add_option("--out", m->out, "Merged sweep directory (created; must be empty unless --force)");
  merge->add_flag("--force", m->force, "Write into a non-empty directory, replacing its files");
  merge->callback([m] { run_merge(*m); });
}

}  // namespace p0sim::cli
