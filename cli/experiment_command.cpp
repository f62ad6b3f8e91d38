// `p0sim experiment`: variants x seeds of one experiment TOML, results.csv, verdict.json and the
// printed table. The experiment file has sections ([experiment], [variants.NAME]), which the
// generic add_config_option rejects, so this command reads its own --config.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.hpp"
#include "common/enum_names.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "study/experiment.hpp"

namespace p0sim::cli {
namespace fs = std::filesystem;

namespace {

struct ExperimentOptions {
  std::string config, out, variants;
  int seeds = 0, threads = 1;  // seeds 0: the config's [experiment] seeds, else kDefaultSeeds
  std::string steps;           // "": each variant's own
  bool force = false, resume = false;
};

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : text + ",") {
    if (ch != ',') {
      cur.push_back(ch);
      continue;
    }
    if (cur.empty()) throw UsageError("--variants", "empty name in '" + text + "'");
    out.push_back(cur);
    cur.clear();
  }
  return out;
}

constexpr int kDefaultSeeds = 3;

// --steps: every variant trains that many steps (a variant's own steps key gives way).
void set_steps(study::ExperimentConfig& c, const std::string& steps) {
  c.base.set("steps", steps, "--steps");
  for (auto& v : c.variants) std::erase_if(v.overrides, [](const auto& kv) { return kv.first == "steps"; });
}

// A larger --steps on --resume extends the finished runs from their last checkpoints, which leaves
// their steps so far as they were only under a constant schedule (a cosine's learning rate at every
// step depends on --steps). Fewer steps would drop training the results rest on.
void check_extension(const study::ExperimentConfig& was, const study::ExperimentConfig& now) {
  for (std::size_t i = 0; i < was.variants.size(); ++i) {
    const study::OptionValues before = study::variant_options(was, was.variants[i]);
    const study::OptionValues after = study::variant_options(now, now.variants[i]);
    study::check_steps_extension("variant '" + was.variants[i].name + "'", std::stol(before.get("steps")),
                                 std::stol(after.get("steps")), *parse_enum<sim::Schedule>(after.get("schedule")));
  }
}

void run_experiment_command(ExperimentOptions o) {
  if (o.out.empty()) throw UsageError("--out", "an output directory is required");
  const fs::path dir = o.out;
  if (o.resume) {
    if (!fs::is_regular_file(dir / "experiment.toml"))
      throw UsageError("--resume", "'" + o.out + "' holds no experiment to resume (no experiment.toml)");
    if (o.config.empty()) o.config = (dir / "experiment.toml").string();
  }
  if (o.config.empty()) throw UsageError("--config", "an experiment TOML is required");
  study::ExperimentConfig c = study::read_experiment_config(o.config, "--config");
  const study::ExperimentConfig as_read = c;
  if (!o.steps.empty()) set_steps(c, o.steps);
  // Seeds: --seeds, else the config's [experiment] seeds, else the default. experiment.toml records
  // the count, so --resume continues with the experiment's own (one written before counts were
  // recorded has none: then the rule above applies). A larger --seeds on --resume extends the
  // experiment: seed i's run derives from (base seed, variant, i) alone, so the finished seeds are
  // the first seeds of the larger experiment and only the new ones train. Fewer would drop
  // finished runs from the verdict, so that is refused.
  const int recorded = o.resume ? study::read_experiment_config(dir / "experiment.toml", "--resume").seeds : 0;
  if (recorded > 0 && o.seeds > 0 && o.seeds < recorded)
    throw UsageError("--seeds", "'" + o.out + "' holds a " + std::to_string(recorded) +
                                    "-seed experiment; --resume keeps its seeds (without --seeds) or adds more "
                                    "(--seeds above " +
                                    std::to_string(recorded) + "), never fewer");
  if (o.seeds == 0) o.seeds = recorded > 0 ? recorded : c.seeds > 0 ? c.seeds : kDefaultSeeds;
  c.seeds = o.seeds;
  std::vector<std::string> names;
  if (o.variants.empty()) {
    for (const auto& v : c.variants) names.push_back(v.name);
  } else {
    const auto asked = split_names(o.variants);
    const std::set<std::string> unique(asked.begin(), asked.end());
    if (unique.size() != asked.size())
      throw UsageError("--variants", "a variant is named twice in '" + o.variants + "'");
    for (const std::string& n : asked)
      if (std::none_of(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v.name == n; }))
        throw UsageError("--variants", "no variant '" + n + "' in '" + o.config + "'");
    const bool search = c.main.empty() && c.control.empty();
    if (!search && (!unique.count(c.main) || !unique.count(c.control)))
      throw UsageError("--variants",
                       "must include the main variant '" + c.main + "' and the control '" + c.control + "'");
    // Keep the file's order, so tables and results.csv do not depend on how the list was typed.
    for (const auto& v : c.variants)
      if (unique.count(v.name)) names.push_back(v.name);
    std::erase_if(c.variants, [&](const auto& v) { return !unique.count(v.name); });
  }
  if (o.resume) {
    // The runs on disk must be the runs this config describes, or the verdict would mix two experiments.
    std::ifstream in(dir / "experiment.toml");
    const std::string on_disk{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    study::ExperimentConfig as_written = as_read;
    as_written.seeds = recorded;  // 0 when written before seed counts were recorded
    std::erase_if(as_written.variants,
                  [&](const auto& v) { return std::find(names.begin(), names.end(), v.name) == names.end(); });
    // With --steps the runs' steps may differ from the experiment's (checked next); nothing else may.
    const study::ExperimentConfig trained = study::read_experiment_config(dir / "experiment.toml", "--resume");
    std::string found = on_disk;
    if (!o.steps.empty()) {
      study::ExperimentConfig t = trained;
      set_steps(t, o.steps);
      set_steps(as_written, o.steps);
      found = study::experiment_toml(t);
    }
    if (found != study::experiment_toml(as_written))
      throw UsageError("--resume", "'" + (dir / "experiment.toml").string() +
                                       "' describes a different experiment than '" + o.config + "' (and --variants)");
    if (!o.steps.empty()) check_extension(trained, c);
    if (::access(dir.c_str(), W_OK) != 0) throw UsageError("--resume", "directory '" + o.out + "' is not writable");
    if ((recorded > 0 && o.seeds > recorded) || !o.steps.empty())
      write_file_atomic(dir / "experiment.toml", study::experiment_toml(c));
  } else {
    std::error_code ec;
    if (!o.force && fs::is_directory(dir, ec) && !fs::is_empty(dir, ec))
      throw UsageError(
          "--out",
          "'" + o.out + "' is not empty (pass --resume to continue the experiment in it, or --force to start it over)");
    prepare_output_dir("--out", o.out, o.force);
    // A forced restart must not pick up an older experiment's runs.
    fs::remove_all(dir / "runs", ec);
    write_file_atomic(dir / "experiment.toml", study::experiment_toml(c));
  }
  const std::size_t total = names.size() * static_cast<std::size_t>(o.seeds);
  std::size_t done = 0;
  study::ExperimentProgress progress;
  // A long study is silent for hours between "done" lines; these say which runs hold the cores.
  progress.on_start = [&](const std::string& variant, int seed_index, int from_step, int steps) {
    std::cerr << "[start] " << variant << " seed-" << seed_index;
    if (from_step > 0)
      std::cerr << " resumed at step " << from_step << " of " << steps << "\n";
    else
      std::cerr << " started (" << steps << " steps)\n";
  };
  progress.on_done = [&](const study::RunRecord& r) {
    std::cerr << "[" << ++done << "/" << total << "] " << r.variant << " seed-" << r.seed_index << " done\n";
  };
  const auto runs = study::run_experiment(c, names, o.seeds, o.threads, dir, progress, o.resume);
  write_file_atomic(dir / "results.csv", study::results_csv(runs));
  // Runs with ablate = true: one table over all of them, variant and seed first.
  std::string ablations;
  for (const study::RunRecord& r : runs) {
    const fs::path f = dir / "runs" / r.variant / ("seed-" + std::to_string(r.seed_index)) / "ablations.csv";
    if (!fs::exists(f)) continue;
    std::ifstream in(f);
    std::string line;
    for (bool header = true; std::getline(in, line); header = false) {
      if (header) {
        if (ablations.empty()) ablations = "variant,seed_index," + line + "\n";
        continue;
      }
      ablations += r.variant + "," + std::to_string(r.seed_index) + "," + line + "\n";
    }
  }
  if (!ablations.empty()) write_file_atomic(dir / "ablations.csv", ablations);
  const nlohmann::json verdict = study::make_verdict(c, names, o.seeds, runs, study::control_chance(c));
  write_file_atomic(dir / "verdict.json", verdict.dump(2) + "\n");
  std::cout << study::verdict_table(verdict) << "wrote " << dir.string() << "\n";
}

}  // namespace

void add_experiment_command(CLI::App& app) {
  auto o = std::make_shared<ExperimentOptions>();
  auto* sub = app.add_subcommand("experiment",
                                 "Train the config's variants (main + controls) for N seeds; verdict on the claims");
  sub->add_option("--config", o->config,
                  "Experiment TOML: train options at the top, [experiment] main/control, [variants.NAME] overrides")
      ->check(CLI::ExistingFile);
  sub->add_option("--seeds", o->seeds,
                  "Seeds per variant (>= 2, for intervals and tests); default: the config's [experiment] seeds, "
                  "else 3; with --resume, more than the experiment's adds seeds")
      ->check(CLI::Range(2, 10000));
  const study::RunOption& steps = *study::find_run_option("steps");
  sub->add_option("--steps", o->steps,
                  "Optimiser steps of every run, over the config's and its variants'; with --resume, more than the "
                  "experiment's extend its finished runs from their last checkpoints (constant schedule only)")
      ->type_name("INT")
      ->check(CLI::Validator([&steps](std::string& in) { return steps.check(in); }, steps.accepted()));
  sub->add_option("--threads", o->threads,
                  "Runs trained in parallel (each single-threaded; results never depend on it)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--variants", o->variants, "Comma-separated subset of the variants (must include main and control)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            return s.find_first_of(" \t/\\") == std::string::npos ? std::string()
                                                                  : "variant names have no spaces or slashes";
          },
          "NAME,NAME,..."));
  sub->add_option("--out", o->out, "Experiment directory (created; must be empty unless --force)");
  auto* force = sub->add_flag("--force", o->force, "Write into a non-empty experiment directory, starting it over");
  sub->add_flag(
         "--resume", o->resume,
         "Continue the experiment in --out: finished runs are kept, partial runs continue from their checkpoints "
         "(--config defaults to OUT/experiment.toml)")
      ->excludes(force);
  sub->callback([o] { run_experiment_command(*o); });
}

}  // namespace p0sim::cli
