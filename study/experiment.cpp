#include "study/experiment.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/rng.hpp"
#include "sim/checkpoint.hpp"
#include "study/jobs.hpp"

namespace p0sim::study {
namespace fs = std::filesystem;
using namespace p0sim::sim;

namespace {

// A finished run's record is its final checkpoint without the weights and optimiser state: the
// train log and probe records its metrics are computed from, a few hundred kilobytes where the
// checkpoint of a d = 256 model is tens of megabytes. A run directory kept without its checkpoint/
// and weights/ (committed beside a study's results, say) still counts as finished on --resume, so
// a long experiment can gather its runs over machines that do not keep each other's files.
TrainState without_weights(const TrainState& st) {
  TrainState slim;
  slim.step = st.step;
  slim.adam_steps = st.adam_steps;
  slim.log = st.log;
  slim.probes = st.probes;
  slim.wall_seconds = st.wall_seconds;
  return slim;
}

}  // namespace

std::vector<RunRecord> run_experiment(const ExperimentConfig& c, const std::vector<std::string>& variants, int seeds,
                                      int threads, const fs::path& out_dir, const ExperimentProgress& progress,
                                      bool resume) {
  struct Job {
    const ExperimentVariant* variant;
    int seed_index;
  };
  std::vector<Job> jobs;
  for (const std::string& name : variants) {
    const auto it = std::find_if(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v.name == name; });
    if (it == c.variants.end()) throw UsageError("--variants", "no variant '" + name + "' in the config");
    for (int i = 0; i < seeds; ++i) jobs.push_back({&*it, i});
  }
  const std::uint64_t base_seed = make_train_config(c.base, "--config").seed;
  std::vector<RunRecord> records(jobs.size());
  std::mutex report_lock;  // one lock for both reports, so a caller's lines never interleave
  // Seed-major: every variant's seed i before any seed i + 1, so an experiment stopped part-way (or
  // extended by seeds) already holds comparable seeds of all its variants.
  std::vector<std::size_t> order;
  for (int i = 0; i < seeds; ++i)
    for (std::size_t v = 0; v < variants.size(); ++v) order.push_back(v * static_cast<std::size_t>(seeds) + i);
  run_jobs(
      order, threads,
      [&](std::size_t j) {
        const Job& job = jobs[j];
        const std::uint64_t seed =
            derive_seed(base_seed, job.variant->name, static_cast<std::uint64_t>(job.seed_index));
        OptionValues options = variant_options(c, *job.variant);
        options.set("seed", std::to_string(seed), "--config");
        const TrainConfig tc = make_train_config(options, "--config");
        const int checkpoint_every = options.spec().checkpoint_every;
        const std::string fingerprint = options.checkpoint_fingerprint();
        const FingerprintCheck fits = options.checkpoint_fits();
        const fs::path dir = out_dir / "runs" / job.variant->name / ("seed-" + std::to_string(job.seed_index));
        // On --resume a finished run's metrics come from its record (or, for runs written before
        // records existed, from its final checkpoint, which then gets a record).
        LoadedCheckpoint checkpoint;
        const fs::path record = dir / kRunRecord;
        if (resume && fs::exists(record)) {
          checkpoint.state = decode_checkpoint(read_text_file(record, "--resume"), fits, tc.steps,
                                               "--resume (" + record.string() + ")");
          // Without its summary the run was cut short after the record and before its files: the
          // record has no weights to write them from, so the full checkpoint is read below.
          checkpoint.found = checkpoint.state.step == tc.steps && fs::exists(dir / "summary.json");
        }
        if (resume && !checkpoint.found) {
          checkpoint = load_latest_checkpoint(checkpoint_dir(dir), fits, tc.steps, "--resume");
          if (checkpoint.state.step == tc.steps && fs::exists(dir / "summary.json") && !fs::exists(record))
            write_file_atomic(record, encode_checkpoint(fingerprint, without_weights(checkpoint.state)));
        }
        const bool finished = checkpoint.found && checkpoint.state.step == tc.steps && fs::exists(dir / "summary.json");
        TrainResult r;
        if (finished) {
          r.probes = checkpoint.state.probes;
          r.emergence = analyse_trace(r.probes, tc.probe, tc.data.task);
          r.final_loss = checkpoint.state.log.empty() ? std::nan("") : checkpoint.state.log.back().loss;
        } else {
          if (progress.on_start) {
            const std::lock_guard<std::mutex> hold(report_lock);
            progress.on_start(job.variant->name, job.seed_index, checkpoint.found ? checkpoint.state.step : 0,
                              tc.steps);
          }
          fs::create_directories(dir);
          // A run extended to more steps is unfinished until its new summary is written.
          fs::remove(dir / "summary.json");
          write_file_atomic(dir / "config.toml", train_options_toml(options));
          Model<float> model(tc.model, tc.batch);
          TrainControl control;
          control.checkpoint_every = checkpoint_every;
          control.checkpoint_at_end = true;
          control.checkpoint_location = checkpoint_dir(dir).string();
          control.save_checkpoint = [&](const TrainState& st) {
            write_checkpoint(checkpoint_dir(dir), fingerprint, st);
            if (st.step == tc.steps) write_file_atomic(record, encode_checkpoint(fingerprint, without_weights(st)));
          };
          if (checkpoint.found) control.resume = &checkpoint.state;
          r = train(model, tc, control);
          write_run(dir, model, tc, r);
        }
        records[j] = RunRecord{job.variant->name, job.seed_index, seed, run_metrics(r)};
      },
      [&](std::size_t j) {
        const std::lock_guard<std::mutex> hold(report_lock);
        if (progress.on_done) progress.on_done(records[j]);
      });
  return records;
}

std::string results_csv(const std::vector<RunRecord>& runs) {
  const std::size_t L = max_layers(runs);
  std::string out = results_header({"variant", "seed_index", "seed"}, L);
  for (const RunRecord& r : runs)
    out += results_row({r.variant, std::to_string(r.seed_index), std::to_string(r.seed)}, r.metrics, L) + "\n";
  return out;
}

}  // namespace p0sim::study
