#include "study/sweep_theory.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <numbers>
#include <sstream>

#include "common/engine_version.hpp"
#include "common/errors.hpp"
#include "common/format.hpp"
#include "common/lists.hpp"
#include "study/results.hpp"
#include "theory/cone.hpp"
#include "theory/cone_mc.hpp"

namespace p0sim::study {
namespace fs = std::filesystem;
using sweep::GridAxis;
using sweep::SweepPlan;
using theory::McEstimator;
using theory::Quantity;

namespace {

// The values of keys a sweep does not name. `estimator` is not among them: a sweep that does not
// sweep it keeps the sweep.toml (and so the identity) it had before the key existed.
const std::vector<std::pair<std::string, std::string>>& theory_defaults() {
  static const std::vector<std::pair<std::string, std::string>> defaults = {
      {"model", enum_name(theory::ValueModel::gauss)},
      {"mask", enum_name(theory::AttnMask::causal)},
      {"theta", sweep::canonical_number(std::numbers::pi / 3)},
      {"mu", "1"},
      {"sigma", "1"},
      {"m", "1"},
      {"heads", "1"}};
  return defaults;
}

// The value of every key at a point: its grid value, else its default.
std::map<std::string, std::string> point_values(const SweepPlan& plan, std::size_t point) {
  std::map<std::string, std::string> kv(theory_defaults().begin(), theory_defaults().end());
  const auto values = plan.point_values(point);
  for (std::size_t a = 0; a < plan.axes().size(); ++a) kv[plan.axes()[a].key] = values[a];
  return kv;
}

McEstimator cone_estimator(const SweepPlan& plan, std::size_t point) {
  const auto kv = point_values(plan, point);
  const auto it = kv.find("estimator");
  return it == kv.end() ? McEstimator::full : *parse_enum<McEstimator>(it->second);
}

theory::ConePoint cone_point(const SweepPlan& plan, std::size_t point) {
  auto kv = point_values(plan, point);
  theory::ConePoint p;
  p.model = *parse_enum<theory::ValueModel>(kv["model"]);
  p.mask = *parse_enum<theory::AttnMask>(kv["mask"]);
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
  return h + "seed_index,seed," + kEngineVersionColumn +
         ",p0_gap_t1_closed_form,p0_gap_t1_mc,p0_gap_last_closed_form,p0_gap_last_mc,p0_"
         "gap_last_ci99,"
         "p0_beats_last_closed_form,p0_beats_last_mc,p0_largest_prob,p0_largest_union_bound\n";
}

std::string theory_row(const theory::ConePoint& p, McEstimator estimator, std::int64_t trials, std::uint64_t seed) {
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

// An axis of names from an enum's table.
template <NamedEnum E>
GridAxis name_axis(const std::string& key, const std::string& list) {
  return sweep::parse_axis(key, list, sweep::ValueKind::name, [&](const std::string& v) {
    if (!parse_enum<E>(v)) throw UsageError("--grid " + key, "value '" + v + "' is not one of " + enum_names_text<E>());
  });
}

GridAxis theory_axis(const std::string& key, const std::string& list) {
  const std::string option = "--grid " + key;
  if (key == "model") return name_axis<theory::ValueModel>(key, list);
  if (key == "mask") return name_axis<theory::AttnMask>(key, list);
  if (key == "estimator") return name_axis<McEstimator>(key, list);
  if (key == "d" || key == "T" || key == "heads") {
    const long lo = key == "d" ? 2 : 1, hi = key == "d" ? 1L << 16 : key == "T" ? 1L << 20 : 1L << 15;
    return sweep::parse_axis(key, list, sweep::ValueKind::number,
                             [&](const std::string& v) { parse_int_list(option, v, lo, hi); });
  }
  if (key == "theta" || key == "mu" || key == "sigma" || key == "m")
    return sweep::parse_axis(key, list, sweep::ValueKind::number, [](const std::string&) {});
  std::string accepted;
  for (const auto& k : theory_grid_keys()) accepted += (accepted.empty() ? "" : ", ") + k;
  throw UsageError("--grid", "unknown key '" + key + "' for --kind theory (accepted: " + accepted + ")");
}

}  // namespace

const std::vector<std::string>& theory_grid_keys() {
  static const std::vector<std::string> keys = {"model", "d", "T",     "theta", "mu",
                                                "sigma", "m", "heads", "mask",  "estimator"};
  return keys;
}

ResolvedSweep resolve_theory_sweep(const TheorySweepSpec& spec) {
  std::vector<GridAxis> axes;
  for (const std::string& grid : spec.grid) {
    const auto [key, list] = sweep::split_grid_spec(grid);
    axes.push_back(theory_axis(key, list));
  }
  for (const char* needed : {"d", "T"})
    if (std::none_of(axes.begin(), axes.end(), [&](const GridAxis& a) { return a.key == needed; }))
      throw UsageError(
          "--grid", std::string("--kind theory needs the key ") + needed + " (e.g. --grid d=16,64 --grid T=8:1024:x4)");

  ResolvedSweep rs;
  rs.plan = std::make_unique<SweepPlan>(axes, spec.seeds);
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
  toml += "seeds = " + std::to_string(spec.seeds) + "\ntrials = " + std::to_string(spec.trials) +
          "\nseed = " + spec.seed + "\n" + plan.grid_toml();
  toml += "# defaults of keys not in the grid:";
  for (const auto& [k, v] : theory_defaults()) toml += " " + k + "=" + v;
  rs.toml = toml + "\n";
  const std::uint64_t base_seed = std::strtoull(spec.seed.c_str(), nullptr, 10);
  const std::int64_t trials = spec.trials;
  const SweepPlan* plan_ptr = rs.plan.get();
  rs.run_row = [base_seed, trials, plan_ptr](std::size_t run, const fs::path&) {
    const SweepPlan& pl = *plan_ptr;
    const std::uint64_t seed = pl.run_seed(base_seed, run);
    const std::size_t point = run / static_cast<std::size_t>(pl.seeds());
    return std::to_string(seed) + "," + std::to_string(kEngineVersion) + "," +
           theory_row(cone_point(pl, point), cone_estimator(pl, point), trials, seed);
  };
  return rs;
}

}  // namespace p0sim::study
