#include "study/sweep_train.hpp"

#include <algorithm>
#include <memory>
#include <set>

#include "common/errors.hpp"
#include "common/files.hpp"
#include "sim/train.hpp"
#include "study/results.hpp"

namespace p0sim::study {
namespace fs = std::filesystem;
using sweep::GridAxis;
using sweep::SweepPlan;

namespace {

// Not grid keys: the seed of each run is derived (--seed is the base), and log-every only paces
// progress lines.
const std::set<std::string> kNotSweepable = {"seed", "log-every"};

struct TrainSweep {
  OptionValues base;
  std::optional<ExperimentConfig> experiment;
  std::size_t max_layers = 1;
};

// The train options of one run: base, then the variant's overrides, then the grid values.
OptionValues train_point_options(const TrainSweep& ts, const SweepPlan& plan, std::size_t point) {
  OptionValues kv = ts.base;
  const auto values = plan.point_values(point);
  for (std::size_t a = 0; a < plan.axes().size(); ++a) {
    if (plan.axes()[a].key != "variant") continue;
    for (const auto& v : ts.experiment->variants)
      if (v.name == values[a])
        for (const auto& [k, val] : v.overrides) kv.set(k, val, "--grid variant");
  }
  for (std::size_t a = 0; a < plan.axes().size(); ++a)
    if (plan.axes()[a].key != "variant") kv.set(plan.axes()[a].key, values[a], "--grid " + plan.axes()[a].key);
  return kv;
}

std::string train_header(const SweepPlan& plan, std::size_t L) {
  std::vector<std::string> identity;
  for (const auto& a : plan.axes()) identity.push_back(a.key);
  identity.push_back("seed_index");
  identity.push_back("seed");
  return results_header(identity, L);
}

// Directory of a point under DIR/runs/ (--keep-runs): its key with '_' between the pairs.
std::string point_dir_name(const SweepPlan& plan, std::size_t point) {
  std::string name = plan.point_key(point);
  std::replace(name.begin(), name.end(), ',', '_');
  return name.empty() ? "base" : name;
}

GridAxis variant_axis(const TrainSweep& ts, const std::string& key, const std::string& list, const std::string& path) {
  if (!ts.experiment)
    throw UsageError("--grid variant",
                     "needs an experiment config with [variants.NAME] tables (--config or --experiment)");
  return sweep::parse_axis(key, list, sweep::ValueKind::name, [&](const std::string& v) {
    std::string names;
    for (const auto& var : ts.experiment->variants) {
      if (var.name == v) return;
      names += (names.empty() ? "" : ", ") + var.name;
    }
    throw UsageError("--grid variant", "no variant '" + v + "' in '" + path + "' (accepted: " + names + ")");
  });
}

GridAxis option_axis(const TrainSweep& ts, const std::string& key, const std::string& list) {
  if (kNotSweepable.count(key))
    throw UsageError("--grid " + key,
                     key == "seed" ? "is not a grid key: each run's seed is derived from --seed, the point and --seeds"
                                   : "is not a grid key (it only paces progress lines)");
  const RunOption* opt = find_run_option(key);
  if (opt == nullptr || !(opt->scope & kEveryRun)) {
    std::string accepted = ts.experiment ? "variant" : "";
    for (const RunOption& o : run_options())
      if ((o.scope & kEveryRun) && !kNotSweepable.count(o.name)) accepted += (accepted.empty() ? "" : ", ") + o.name;
    throw UsageError("--grid", "unknown key '" + key + "' (accepted: " + accepted + ")");
  }
  const bool numeric = opt->type == OptionType::integer || opt->type == OptionType::real;
  return sweep::parse_axis(key, list, numeric ? sweep::ValueKind::number : sweep::ValueKind::name,
                           [&](const std::string& v) {
                             const std::string why = opt->check(v);
                             if (!why.empty())
                               throw UsageError("--grid " + key, "value '" + v + "': --" + key + ": " + why);
                           });
}

// sweep.toml: what `p0sim sweep --config` accepts back, plus the variants as comments so two
// sweeps over differently defined variants never count as the same sweep.
std::string train_sweep_toml(const TrainSweep& ts, const TrainSweepSpec& spec, const SweepPlan& plan) {
  std::string toml = "# resolved sweep of 'p0sim sweep'; pass back with --config (and --out)\nkind = \"train\"\n";
  if (ts.experiment) toml += "experiment = \"" + spec.experiment_path + "\"\n";
  toml += "seeds = " + std::to_string(spec.seeds) + "\n" + plan.grid_toml();
  // The base values of grid keys are never used: leave them out so the file says what varies.
  for (const RunOption& opt : run_options())
    // checkpoint-every is a sweep option only through an experiment's base (sweeps never checkpoint).
    if ((opt.scope & kEveryRun) && (opt.name != "checkpoint-every" || ts.experiment) &&
        std::none_of(plan.axes().begin(), plan.axes().end(), [&](const GridAxis& a) { return a.key == opt.name; }))
      toml += opt.name + " = " + toml_value(opt, ts.base.get(opt.name)) + "\n";
  if (ts.experiment)
    for (const auto& v : ts.experiment->variants) {
      toml += "# variant " + v.name + ":";
      for (const auto& [k, val] : v.overrides) toml += " " + k + "=" + val;
      toml += v.overrides.empty() ? " (no overrides)\n" : "\n";
    }
  return toml;
}

}  // namespace

ResolvedSweep resolve_train_sweep(const TrainSweepSpec& spec) {
  auto ts = std::make_shared<TrainSweep>();
  ts->base = spec.base;
  ts->experiment = spec.experiment;

  std::vector<GridAxis> axes;
  for (const std::string& grid : spec.grid) {
    const auto [key, list] = sweep::split_grid_spec(grid);
    axes.push_back(key == "variant" ? variant_axis(*ts, key, list, spec.experiment_path) : option_axis(*ts, key, list));
  }
  // A grid key that a variant sets would silently undo the variant: refuse it.
  for (const auto& axis : axes) {
    if (axis.key != "variant") continue;
    for (const auto& name : axis.values)
      for (const auto& var : ts->experiment->variants)
        if (var.name == name)
          for (const auto& [k, v] : var.overrides)
            for (const auto& other : axes)
              if (other.key == k)
                throw UsageError("--grid " + k,
                                 "variant '" + name + "' sets '" + k + "' itself; sweep it or the variant, not both");
  }

  ResolvedSweep rs;
  rs.plan = std::make_unique<SweepPlan>(axes, spec.seeds);
  const SweepPlan& plan = *rs.plan;
  for (std::size_t p = 0; p < plan.points(); ++p) {
    sim::TrainConfig tc;
    try {
      tc = make_train_config(train_point_options(*ts, plan, p), "--grid");
    } catch (const UsageError& e) {
      throw UsageError("--grid",
                       "point " + (plan.point_key(p).empty() ? "(base)" : plan.point_key(p)) + ": " + e.what());
    }
    if (tc.probe.every <= 0)
      throw UsageError("--probe-every", "must be > 0 in a sweep (the metrics come from the probes)");
    ts->max_layers = std::max<std::size_t>(ts->max_layers, static_cast<std::size_t>(tc.model.layers));
  }
  rs.header = train_header(plan, ts->max_layers);
  rs.toml = train_sweep_toml(*ts, spec, plan);

  const std::uint64_t base_seed = make_train_config(ts->base, "--seed").seed;
  const bool keep = spec.keep_runs;
  const SweepPlan* plan_ptr = rs.plan.get();
  rs.run_row = [ts, base_seed, keep, plan_ptr](std::size_t run, const fs::path& out) {
    const SweepPlan& pl = *plan_ptr;
    const std::size_t point = run / static_cast<std::size_t>(pl.seeds());
    const std::uint64_t seed = pl.run_seed(base_seed, run);
    OptionValues options = train_point_options(*ts, pl, point);
    options.set("seed", std::to_string(seed), "--seed");
    const sim::TrainConfig tc = make_train_config(options, "--grid");
    sim::Model<float> model(tc.model, tc.batch);
    const sim::TrainResult r = sim::train(model, tc);
    if (keep) {
      const fs::path dir = out / "runs" / point_dir_name(pl, point) / ("seed-" + std::to_string(run % pl.seeds()));
      fs::create_directories(dir);
      write_file_atomic(dir / "config.toml", train_options_toml(options));
      sim::write_run(dir, model, tc, r);
    }
    return std::to_string(seed) + results_row({}, run_metrics(r), ts->max_layers);
  };
  return rs;
}

}  // namespace p0sim::study
