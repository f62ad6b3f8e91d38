// `p0sim sweep` and `p0sim sweep-merge` (issue 5): a grid of training runs (or cone-model points)
// x seeds, on a pool of threads, one shard of a job array, or MPI ranks, with one results.csv
// that has the same bytes whichever way it was run. The kind-independent machinery (grid, plan,
// journal, pool, progress) is common/sweep.hpp; what one run computes is here.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <numbers>
#include <set>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/sweep_mpi.hpp"
#include "cli/train_options.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"
#include "common/lists.hpp"
#include "study/sweep.hpp"
#include "study/experiment.hpp"
#include "sim/train.hpp"
#include "theory/cone.hpp"
#include "theory/cone_mc.hpp"

namespace p0sim::cli {
namespace fs = std::filesystem;
using sweep::GridAxis;
using sweep::JobResult;
using sweep::SweepPlan;

namespace {

struct SweepOptions {
  std::unique_ptr<RunOptionFlags> train;  // the base point of a train sweep (and --seed, the base seed of both kinds)
  std::string config, experiment, kind = "train", shard, out;
  std::vector<std::string> grid;
  int seeds = 1, threads = 1;
  std::int64_t trials = 2000;
  bool resume = false, force = false, keep_runs = false;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// An experiment TOML has [experiment] / [variants.NAME] sections; a plain sweep TOML has none.
bool has_sections(const std::string& path) {
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) {
    const auto b = line.find_first_not_of(" \t");
    if (b != std::string::npos && line[b] == '[') return true;
  }
  return false;
}


// ---- grid values -------------------------------------------------------------------------------

// How a grid key's values are read: numbers (ranges allowed, sorted ascending) or names (as given).
enum class ValueKind { number, name };

// Canonical values of one axis; `check` validates one canonical value (throws UsageError).
GridAxis parse_axis(const std::string& key, const std::string& list, ValueKind kind,
                    const std::function<void(const std::string&)>& check) {
  const std::string option = "--grid " + key;
  GridAxis axis{key, {}};
  if (kind == ValueKind::number) {
    std::vector<double> values = parse_double_list(option, list);
    std::sort(values.begin(), values.end());
    for (double v : values) axis.values.push_back(sweep::canonical_number(v));
  } else {
    axis.values = sweep::split_names(option, list);
  }
  std::set<std::string> seen;
  for (const auto& v : axis.values) {
    if (!seen.insert(v).second) throw UsageError(option, "value '" + v + "' is listed twice in '" + list + "'");
    check(v);
  }
  return axis;
}

// ---- the train kind ----------------------------------------------------------------------------

// Not grid keys: the seed of each run is derived (--seed is the base), and log-every only paces
// progress lines.
const std::set<std::string> kNotSweepable = {"seed", "log-every"};

struct TrainSweep {
  study::OptionValues base;  // every run option, resolved
  std::optional<study::ExperimentConfig> experiment;
  std::size_t max_layers = 1;
};

// The train options of one run: base, then the variant's overrides, then the grid values.
study::OptionValues train_point_options(const TrainSweep& ts, const SweepPlan& plan, std::size_t point) {
  study::OptionValues kv = ts.base;
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
  return study::results_header(identity, L);
}

// Directory of a point under DIR/runs/ (--keep-runs): its key with '_' between the pairs.
std::string point_dir_name(const SweepPlan& plan, std::size_t point) {
  std::string name = plan.point_key(point);
  std::replace(name.begin(), name.end(), ',', '_');
  return name.empty() ? "base" : name;
}

// ---- the theory kind ---------------------------------------------------------------------------

const std::vector<std::string> kTheoryKeys = {"model", "d", "T", "theta", "mu", "sigma", "m", "heads", "mask", "estimator"};
const study::KeyValues kTheoryDefaults = {{"model", "gauss"}, {"mask", "causal"}, {"theta", sweep::canonical_number(std::numbers::pi / 3)},
                                        {"mu", "1"},        {"sigma", "1"},     {"m", "1"},
                                        {"heads", "1"}};
// The Monte-Carlo estimator of a theory run: the grid key `estimator` if swept, else full. Not in
// kTheoryDefaults, so sweeps that do not sweep it keep the sweep.toml (and identity) they had.
theory::McEstimator cone_estimator(const SweepPlan& plan, std::size_t point) {
  const auto values = plan.point_values(point);
  for (std::size_t a = 0; a < plan.axes().size(); ++a)
    if (plan.axes()[a].key == "estimator" && values[a] == "radial") return theory::McEstimator::radial;
  return theory::McEstimator::full;
}

theory::ConePoint cone_point(const SweepPlan& plan, std::size_t point) {
  std::map<std::string, std::string> kv(kTheoryDefaults.begin(), kTheoryDefaults.end());
  const auto values = plan.point_values(point);
  for (std::size_t a = 0; a < plan.axes().size(); ++a) kv[plan.axes()[a].key] = values[a];
  theory::ConePoint p;
  const std::string& model = kv["model"];
  p.model = model == "axis" ? theory::ValueModel::axis : model == "cap" ? theory::ValueModel::cap : theory::ValueModel::gauss;
  p.mask = kv["mask"] == "bidirectional" ? theory::AttnMask::bidirectional : theory::AttnMask::causal;
  p.d = std::stoi(kv["d"]);
  p.T = std::stoi(kv["T"]);
  p.heads = std::stoi(kv["heads"]);
  p.theta = std::stod(kv["theta"]);
  p.mu = std::stod(kv["mu"]);
  p.sigma = std::stod(kv["sigma"]);
  p.m = std::stod(kv["m"]);
  return p;
}

std::string theory_header(const SweepPlan& plan) {
  std::string h;
  for (const auto& a : plan.axes()) h += a.key + ",";
  return h +
         "seed_index,seed,p0_gap_t1_closed_form,p0_gap_t1_mc,p0_gap_last_closed_form,p0_gap_last_mc,p0_gap_last_ci99,"
         "p0_beats_last_closed_form,p0_beats_last_mc,p0_largest_prob,p0_largest_union_bound\n";
}

std::string theory_row(const theory::ConePoint& p, theory::McEstimator estimator, std::int64_t trials, std::uint64_t seed) {
  using theory::Quantity;
  std::vector<int> positions{0};
  if (p.T > 1) positions.push_back(1);
  if (p.T > 2) positions.push_back(p.T - 1);
  theory::McOptions mo;
  mo.trials = trials;
  mo.seed = seed;
  mo.threads = 1;
  mo.estimator = estimator;
  const theory::McResult r = theory::simulate(p, positions, mo);
  auto stats = [&](int t, Quantity q) -> const RunningStats* {
    for (std::size_t i = 0; i < r.positions.size(); ++i)
      if (r.positions[i] == t) return &r.stats[i][static_cast<int>(q)];
    return nullptr;
  };
  auto cf = [&](int t, Quantity q) {
    if (t < 1 || t >= p.T) return std::string();
    const auto v = theory::closed_form(p, t, q);
    return v ? csv_number(*v) : std::string();
  };
  auto mc = [&](int t, Quantity q) {
    const RunningStats* s = t >= 1 ? stats(t, q) : nullptr;
    return s != nullptr && s->n > 0 ? csv_number(s->mean) : std::string();
  };
  const int last = p.T - 1;
  const RunningStats* gap_last = last >= 1 ? stats(last, Quantity::p0_gap) : nullptr;
  const RunningStats* largest = stats(0, Quantity::p0_largest_prob);
  std::ostringstream row;
  row << cf(1, Quantity::p0_gap) << ',' << mc(1, Quantity::p0_gap) << ',' << cf(last, Quantity::p0_gap) << ','
      << mc(last, Quantity::p0_gap) << ','
      << (gap_last != nullptr && gap_last->n > 1 ? csv_number(gap_last->ci_half_width(0.99)) : std::string()) << ','
      << cf(last, Quantity::p0_beats_t_prob) << ',' << mc(last, Quantity::p0_beats_t_prob) << ','
      << (largest != nullptr && largest->n > 0 ? csv_number(largest->mean) : std::string()) << ','
      << cf(last, Quantity::p0_largest_union_bound);
  return row.str();
}

// ---- resolving a sweep -------------------------------------------------------------------------

// Everything the sweep needs after validation: the plan, what one run computes, the header and
// the resolved sweep.toml. Built identically on every MPI rank from the same arguments.
struct ResolvedSweep {
  std::unique_ptr<SweepPlan> plan;
  std::string header, toml;
  std::function<std::string(std::size_t run, const fs::path& out)> run_row;  // the row after the run id
};

ResolvedSweep resolve_train(const SweepOptions& o) {
  auto ts = std::make_shared<TrainSweep>();
  std::vector<std::string> train_keys;
  for (const study::RunOption& opt : study::run_options())
    if (opt.scope & study::kEveryRun) train_keys.push_back(opt.name);

  if (!o.experiment.empty()) {
    ts->experiment = study::read_experiment_config(o.experiment, "--experiment");
    ts->base = ts->experiment->base;
  }
  // Options given on the command line override the experiment's base; without an experiment the
  // defaults are the base.
  ts->base = o.train->values(ts->base);

  std::vector<GridAxis> axes;
  for (const std::string& spec : o.grid) {
    const auto [key, list] = sweep::split_grid_spec(spec);
    if (key == "variant") {
      if (!ts->experiment)
        throw UsageError("--grid variant", "needs an experiment config with [variants.NAME] tables (--config or --experiment)");
      axes.push_back(parse_axis(key, list, ValueKind::name, [&](const std::string& v) {
        std::string names;
        for (const auto& var : ts->experiment->variants) {
          if (var.name == v) return;
          names += (names.empty() ? "" : ", ") + var.name;
        }
        throw UsageError("--grid variant", "no variant '" + v + "' in '" + o.experiment + "' (accepted: " + names + ")");
      }));
      continue;
    }
    if (kNotSweepable.count(key))
      throw UsageError("--grid " + key, key == "seed" ? "is not a grid key: each run's seed is derived from --seed, the point and --seeds"
                                                      : "is not a grid key (it only paces progress lines)");
    if (std::find(train_keys.begin(), train_keys.end(), key) == train_keys.end()) {
      std::string accepted = ts->experiment ? "variant" : "";
      for (const auto& k : train_keys)
        if (!kNotSweepable.count(k)) accepted += (accepted.empty() ? "" : ", ") + k;
      throw UsageError("--grid", "unknown key '" + key + "' (accepted: " + accepted + ")");
    }
    const study::RunOption& opt = *study::find_run_option(key);
    const bool numeric = opt.type == study::OptionType::integer || opt.type == study::OptionType::real;
    axes.push_back(parse_axis(key, list, numeric ? ValueKind::number : ValueKind::name, [&](const std::string& v) {
      const std::string why = opt.check(v);
      if (!why.empty()) throw UsageError("--grid " + key, "value '" + v + "': --" + key + ": " + why);
    }));
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
                throw UsageError("--grid " + k, "variant '" + name + "' sets '" + k +
                                                    "' itself; sweep it or the variant, not both");
  }

  ResolvedSweep rs;
  rs.plan = std::make_unique<SweepPlan>(axes, o.seeds);
  const SweepPlan& plan = *rs.plan;
  for (std::size_t p = 0; p < plan.points(); ++p) {
    sim::TrainConfig tc;
    try {
      tc = study::make_train_config(train_point_options(*ts, plan, p), "--grid");
    } catch (const UsageError& e) {
      throw UsageError("--grid", "point " + (plan.point_key(p).empty() ? "(base)" : plan.point_key(p)) + ": " + e.what());
    }
    if (tc.probe.every <= 0)
      throw UsageError("--probe-every", "must be > 0 in a sweep (the metrics come from the probes)");
    ts->max_layers = std::max<std::size_t>(ts->max_layers, static_cast<std::size_t>(tc.model.layers));
  }
  rs.header = train_header(plan, ts->max_layers);

  // sweep.toml: what `p0sim sweep --config` accepts back, plus the variants as comments so two
  // sweeps over differently defined variants never count as the same sweep.
  std::string toml = "# resolved sweep of 'p0sim sweep'; pass back with --config (and --out)\nkind = \"train\"\n";
  if (ts->experiment) toml += "experiment = \"" + o.experiment + "\"\n";
  toml += "seeds = " + std::to_string(o.seeds) + "\n" + plan.grid_toml();
  // The base values of grid keys are never used: leave them out so the file says what varies.
  for (const study::RunOption& opt : study::run_options())
    // checkpoint-every is a sweep option only through an experiment's base (sweeps never checkpoint).
    if ((opt.scope & study::kEveryRun) && (opt.name != "checkpoint-every" || ts->experiment) &&
        std::none_of(axes.begin(), axes.end(), [&](const GridAxis& a) { return a.key == opt.name; }))
      toml += opt.name + " = " + study::toml_value(opt, ts->base.get(opt.name)) + "\n";
  if (ts->experiment)
    for (const auto& v : ts->experiment->variants) {
      toml += "# variant " + v.name + ":";
      for (const auto& [k, val] : v.overrides) toml += " " + k + "=" + val;
      toml += v.overrides.empty() ? " (no overrides)\n" : "\n";
    }
  rs.toml = toml;

  const std::uint64_t base_seed = study::make_train_config(ts->base, "--seed").seed;
  const bool keep = o.keep_runs;
  const SweepPlan* plan_ptr = rs.plan.get();
  rs.run_row = [ts, base_seed, keep, plan_ptr](std::size_t run, const fs::path& out) {
    const SweepPlan& pl = *plan_ptr;
    const std::size_t point = run / static_cast<std::size_t>(pl.seeds());
    const std::uint64_t seed = pl.run_seed(base_seed, run);
    study::OptionValues options = train_point_options(*ts, pl, point);
    options.set("seed", std::to_string(seed), "--seed");
    const sim::TrainConfig tc = study::make_train_config(options, "--grid");
    sim::Model<float> model(tc.model, tc.batch);
    const sim::TrainResult r = sim::train(model, tc);
    if (keep) {
      const fs::path dir = out / "runs" / point_dir_name(pl, point) / ("seed-" + std::to_string(run % pl.seeds()));
      fs::create_directories(dir);
      write_file_atomic(dir / "config.toml", study::train_options_toml(options));
      sim::write_run(dir, model, tc, r);
    }
    return std::to_string(seed) + study::results_row({}, study::run_metrics(r), ts->max_layers);
  };
  return rs;
}

ResolvedSweep resolve_theory(const CLI::App& sub, const SweepOptions& o) {
  for (const CLI::Option* opt : sub.get_options()) {
    const std::string& name = opt->get_single_name();
    static const std::set<std::string> own = {"help", "config", "experiment", "kind", "grid", "seeds", "threads",
                                              "trials", "shard", "resume", "force", "keep-runs", "out", "seed"};
    if (opt->count() > 0 && !own.count(name))
      throw UsageError("--" + name, "is a train option; --kind theory sweeps the cone model (grid keys: model, d, T, theta, "
                                    "mu, sigma, m, heads, mask, estimator)");
  }
  if (!o.experiment.empty()) throw UsageError("--experiment", "only a train sweep has variants");
  if (o.keep_runs) throw UsageError("--keep-runs", "a theory sweep has no run directories");
  std::vector<GridAxis> axes;
  for (const std::string& spec : o.grid) {
    const auto [key, list] = sweep::split_grid_spec(spec);
    const std::string option = "--grid " + key;
    if (key == "model" || key == "mask" || key == "estimator") {
      const std::string names = key == "model" ? "axis, cap, gauss" : key == "mask" ? "causal, bidirectional" : "full, radial";
      const std::set<std::string> accepted = key == "model"  ? std::set<std::string>{"axis", "cap", "gauss"}
                                             : key == "mask" ? std::set<std::string>{"causal", "bidirectional"}
                                                             : std::set<std::string>{"full", "radial"};
      axes.push_back(parse_axis(key, list, ValueKind::name, [&](const std::string& v) {
        if (!accepted.count(v)) throw UsageError(option, "value '" + v + "' is not one of " + names);
      }));
    } else if (key == "d" || key == "T" || key == "heads") {
      const long lo = key == "d" ? 2 : 1, hi = key == "d" ? 1L << 16 : key == "T" ? 1L << 20 : 1L << 15;
      axes.push_back(parse_axis(key, list, ValueKind::number, [&](const std::string& v) { parse_int_list(option, v, lo, hi); }));
    } else if (key == "theta" || key == "mu" || key == "sigma" || key == "m") {
      axes.push_back(parse_axis(key, list, ValueKind::number, [](const std::string&) {}));
    } else {
      throw UsageError("--grid", "unknown key '" + key + "' for --kind theory (accepted: model, d, T, theta, mu, sigma, m, heads, mask, estimator)");
    }
  }
  for (const char* needed : {"d", "T"})
    if (std::none_of(axes.begin(), axes.end(), [&](const GridAxis& a) { return a.key == needed; }))
      throw UsageError("--grid", std::string("--kind theory needs the key ") + needed + " (e.g. --grid d=16,64 --grid T=8:1024:x4)");

  ResolvedSweep rs;
  rs.plan = std::make_unique<SweepPlan>(axes, o.seeds);
  const SweepPlan& plan = *rs.plan;
  for (std::size_t p = 0; p < plan.points(); ++p) {
    try {
      theory::validate(cone_point(plan, p));
      theory::validate_estimator(cone_point(plan, p), cone_estimator(plan, p));
    } catch (const UsageError& e) {
      throw UsageError("--grid", "point " + plan.point_key(p) + ": " + e.what());
    }
  }
  rs.header = theory_header(plan);
  std::string toml = "# resolved sweep of 'p0sim sweep'; pass back with --config (and --out)\nkind = \"theory\"\n";
  toml += "seeds = " + std::to_string(o.seeds) + "\ntrials = " + std::to_string(o.trials) + "\nseed = " +
          o.train->values().get("seed") + "\n" + plan.grid_toml();
  toml += "# defaults of keys not in the grid:";
  for (const auto& [k, v] : kTheoryDefaults) toml += " " + k + "=" + v;
  rs.toml = toml + "\n";
  const std::uint64_t base_seed = std::strtoull(o.train->values().get("seed").c_str(), nullptr, 10);
  const std::int64_t trials = o.trials;
  const SweepPlan* plan_ptr = rs.plan.get();
  rs.run_row = [base_seed, trials, plan_ptr](std::size_t run, const fs::path&) {
    const SweepPlan& pl = *plan_ptr;
    const std::uint64_t seed = pl.run_seed(base_seed, run);
    const std::size_t point = run / static_cast<std::size_t>(pl.seeds());
    return std::to_string(seed) + "," + theory_row(cone_point(pl, point), cone_estimator(pl, point), trials, seed);
  };
  return rs;
}

std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream ia(a), ib(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ea = !std::getline(ia, la), eb = !std::getline(ib, lb);
    if (ea && eb) return "they are equal";
    if (ea || eb || la != lb)
      return "line " + std::to_string(line) + ": '" + (ea ? std::string("(end)") : la) + "' vs '" + (eb ? std::string("(end)") : lb) + "'";
  }
}

// The sweep's identity: sweep.toml without its shard line, equal for all shards of one sweep.
std::string sweep_identity(const std::string& toml) {
  std::istringstream in(toml);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("# shard ", 0) != 0) out += line + "\n";
  return out;
}

void run_sweep(const CLI::App& sub, SweepOptions& o) {
  if (o.out.empty()) throw UsageError("--out", "a sweep directory is required");
  if (o.resume && o.force) throw UsageError("--resume", "cannot be combined with --force (--force starts the sweep over)");
  const sweep::ShardSpec shard = o.shard.empty() ? sweep::ShardSpec{} : sweep::parse_shard(o.shard);
  ResolvedSweep rs = o.kind == "theory" ? resolve_theory(sub, o) : resolve_train(o);
  if (shard.count > 1) rs.toml += "# shard " + shard.text() + "\n";
  const SweepPlan& plan = *rs.plan;
  const fs::path dir = o.out;
  const std::size_t id_fields = plan.axes().size() + 1;

  // Only rank 0 (or the only process) touches DIR's files; the others compute rows.
  mpi::Session session;
  std::vector<std::size_t> pending;
  std::unique_ptr<sweep::Journal> results, timings;
  std::size_t owned = 0;
  if (session.is_root()) {
    std::error_code ec;
    const bool exists_nonempty = fs::is_directory(dir, ec) && !fs::is_empty(dir, ec);
    if (exists_nonempty && !o.resume && !o.force)
      throw UsageError("--out", "'" + dir.string() + "' is not empty (pass --resume to continue the sweep in it, or --force to start over)");
    prepare_output_dir("--out", dir, true);
    if (exists_nonempty && o.resume && fs::exists(dir / "sweep.toml")) {
      const std::string old = slurp(dir / "sweep.toml");
      if (old != rs.toml)
        throw UsageError("--resume", "'" + dir.string() + "' holds a different sweep (sweep.toml differs at " +
                                         first_difference(old, rs.toml) + ")");
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
      if (!shard.owns(r)) continue;
      ++owned;
      if (!results->has(r)) pending.push_back(r);
    }
  }

  const double start = sweep::now_seconds();
  std::unique_ptr<sweep::Progress> progress;
  if (session.is_root()) progress = std::make_unique<sweep::Progress>(owned, owned - pending.size());
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
  if (!session.is_root()) return;
  progress->close();
  results->finish();
  timings->finish();
  const double wall = sweep::now_seconds() - start;
  std::cout << "sweep: " << owned << " runs" << (shard.count > 1 ? " (shard " + shard.text() + ")" : std::string()) << ", "
            << pending.size() << " computed, " << owned - pending.size() << " already done; " << fmt9(static_cast<float>(wall))
            << " s";
  if (!pending.empty()) std::cout << " (" << fmt9(static_cast<float>(3600.0 * static_cast<double>(pending.size()) / wall)) << " runs/hour)";
  std::cout << "; wrote " << (dir / "results.csv").string() << "\n";
}

// ---- sweep-merge -------------------------------------------------------------------------------

struct MergeOptions {
  std::vector<std::string> dirs;
  std::string out;
  bool force = false;
};

// The plan a sweep.toml describes (its grid and seeds), for ordering merged rows.
SweepPlan plan_from_toml(const fs::path& path) {
  std::vector<CLI::ConfigItem> items;
  try {
    items = CLI::ConfigTOML().from_file(path.string());
  } catch (const CLI::ParseError& e) {
    throw UsageError("DIR", "cannot read '" + path.string() + "': " + e.what());
  }
  std::vector<GridAxis> axes;
  int seeds = 0;
  for (const auto& item : items) {
    if (item.name == "seeds" && !item.inputs.empty()) seeds = std::stoi(item.inputs[0]);
    if (item.name == "grid")
      for (const auto& spec : item.inputs) {
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

void run_merge(const MergeOptions& o) {
  if (o.dirs.empty()) throw UsageError("DIR", "name the shard directories to merge (p0sim sweep-merge DIR_1 ... DIR_N --out DIR)");
  if (o.out.empty()) throw UsageError("--out", "the merged sweep directory is required");
  std::string identity, first;
  for (const auto& d : o.dirs) {
    const fs::path toml = fs::path(d) / "sweep.toml";
    if (!fs::is_regular_file(toml)) throw UsageError("DIR", "'" + d + "' has no sweep.toml: not a sweep directory");
    if (!fs::is_regular_file(fs::path(d) / "results.csv")) throw UsageError("DIR", "'" + d + "' has no results.csv");
    const std::string id = sweep_identity(slurp(toml));
    if (first.empty()) {
      identity = id;
      first = d;
    } else if (id != identity) {
      throw UsageError("DIR", "'" + d + "' is a shard of a different sweep than '" + first + "' (sweep.toml differs at " +
                                  first_difference(identity, id) + ")");
    }
  }
  const SweepPlan plan = plan_from_toml(fs::path(o.dirs.front()) / "sweep.toml");
  const std::size_t id_fields = plan.axes().size() + 1;
  std::string header, timing_header;
  std::map<std::size_t, std::string> rows, times;
  for (const auto& d : o.dirs) {
    for (const bool timing : {false, true}) {
      const fs::path file = fs::path(d) / (timing ? "timings.csv" : "results.csv");
      if (timing && !fs::exists(file)) continue;  // timings are informative only
      const std::string text = slurp(file);
      std::string& h = timing ? timing_header : header;
      if (h.empty()) h = first_line(text);
      if (first_line(text) != h) throw UsageError("DIR", "'" + file.string() + "' has other columns than the first shard's");
      for (const auto& row : body_lines(text, h)) {
        const auto run = plan.index_of(sweep::row_id(row, id_fields));
        if (!run) throw UsageError("DIR", "'" + file.string() + "' holds a row that is not a run of the sweep: '" + sweep::row_id(row, id_fields) + "'");
        auto& target = timing ? times : rows;
        const auto [it, fresh] = target.emplace(*run, row);
        if (!fresh && it->second != row && !timing)
          throw UsageError("DIR", "run '" + sweep::row_id(row, id_fields) + "' has different results in two shards ('" + file.string() + "')");
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
    throw UsageError("DIR", "the shards hold " + std::to_string(rows.size()) + " of the sweep's " + std::to_string(plan.runs()) +
                                " runs (missing e.g. '" + plan.run_id(missing) +
                                "'): finish the missing shard (p0sim sweep ... --shard i/N --resume) and merge again");
  }
  prepare_output_dir("--out", o.out, o.force);
  const fs::path out = o.out;
  std::string text = header, ttext = timing_header;
  for (const auto& [r, row] : rows) text += row + "\n";
  for (const auto& [r, row] : times) ttext += row + "\n";
  write_file_atomic(out / "sweep.toml", identity);
  if (!ttext.empty()) write_file_atomic(out / "timings.csv", ttext);
  write_file_atomic(out / "results.csv", text);
  std::cout << "merged " << o.dirs.size() << " shards, " << rows.size() << " runs; wrote " << (out / "results.csv").string() << "\n";
}

}  // namespace

void add_sweep_commands(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  auto* sub = app.add_subcommand(
      "sweep", "Train (or evaluate the cone model) over a grid x seeds on threads, shards or MPI ranks; one results.csv");
  o->train = std::make_unique<RunOptionFlags>(*sub, study::kEveryRun);
  sub->get_option("--seed")->description("Base seed: each run's seed is derived from it, the point's key and the seed index");
  sub->add_option("--config", o->config,
                  "TOML: sweep and train options (keys without dashes, grid = [\"KEY=LIST\", ...]), or an experiment "
                  "TOML with [variants.NAME] tables (then `variant` is a grid key)")
      ->check(CLI::ExistingFile);
  sub->add_option("--experiment", o->experiment, "Experiment TOML whose base and [variants.NAME] the sweep uses (grid key `variant`)")
      ->check(CLI::ExistingFile);
  sub->add_option("--kind", o->kind, "train: train the model at each point; theory: the cone model (Monte Carlo + closed forms)")
      ->check(CLI::IsMember({"train", "theory"}));
  sub->add_option("--grid", o->grid,
                  "KEY=LIST, repeatable; points are the Cartesian product. KEY: a train option without dashes (or "
                  "`variant`); theory: model, d, T, theta, mu, sigma, m, heads, mask, estimator (full, radial). LIST: a,b,c or "
                  "lo:hi:xk")
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
  sub->add_option("--shard", o->shard, "Run only the runs whose canonical index is i mod N (job arrays); merge with sweep-merge")
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
      if (has_sections(o->config)) {
        if (!o->experiment.empty()) throw UsageError("--config", "an experiment TOML given twice (--config and --experiment)");
        o->experiment = o->config;
      } else {
        apply_config_file(*sub, o->config);
      }
    }
    run_sweep(*sub, *o);
  });

  auto m = std::make_shared<MergeOptions>();
  auto* merge = app.add_subcommand("sweep-merge", "Merge the shard directories of one sweep into the results.csv of an unsharded run");
  merge->add_option("DIR", m->dirs, "Shard directories (each written by p0sim sweep --shard i/N)")->check(CLI::ExistingDirectory);
  merge->add_option("--out", m->out, "Merged sweep directory (created; must be empty unless --force)");
  merge->add_flag("--force", m->force, "Write into a non-empty directory, replacing its files");
  merge->callback([m] { run_merge(*m); });
}

}  // namespace p0sim::cli
