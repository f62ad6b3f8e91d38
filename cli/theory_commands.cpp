// `p0sim theory cone`: the cone model in closed form and by Monte Carlo (`theory circuit` is
// theory_circuit_command.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/lists.hpp"
#include "theory/cone.hpp"
#include "theory/cone_mc.hpp"
#include "theory/cone_report.hpp"

namespace p0sim::cli {
namespace {

using namespace p0sim::theory;

struct ConeOptions {
  std::string model;
  std::vector<std::string> masks{enum_name(AttnMask::causal)};
  std::string d, T;
  std::string theta = "1.0471975511965976";  // pi/3
  double mu = 1.0;
  double sigma = 1.0;
  std::string m = "1";
  std::string heads = "1";
  std::string positions = "all";
  std::int64_t trials = 10000;
  std::uint64_t seed = 1;
  int threads = 1;
  std::string estimator = enum_name(McEstimator::full);
  std::string out;
  bool force = false;
};

// One position token: an integer >= 0, or "T-k" (k >= 1) relative to each point's T.
struct PositionSpec {
  bool from_end;
  long value;
};

std::vector<PositionSpec> parse_positions(const std::string& text) {
  std::vector<PositionSpec> specs;
  if (text == "all") return specs;
  std::string token;
  auto flush = [&] {
    if (token.empty()) throw UsageError("--positions", "empty entry (accepted: all, or a list like 0,1,T-1)");
    if (token.rfind("T-", 0) == 0) {
      const long k = parse_int_list("--positions", token.substr(2), 1, 1L << 30).at(0);
      specs.push_back({true, k});
    } else {
      specs.push_back({false, parse_int_list("--positions", token, 0, 1L << 30).at(0)});
    }
    token.clear();
  };
  for (char c : text) {
    if (c == ',')
      flush();
    else if (c != ' ')
      token.push_back(c);
  }
  flush();
  return specs;
}

// The requested positions that exist at this T, sorted and distinct (all of 0..T-1 by default).
std::vector<int> positions_for(const std::vector<PositionSpec>& specs, int T) {
  std::vector<int> out;
  if (specs.empty()) {
    for (int t = 0; t < T; ++t) out.push_back(t);
    return out;
  }
  for (const auto& s : specs) {
    const long t = s.from_end ? T - s.value : s.value;
    if (t >= 0 && t < T) out.push_back(static_cast<int>(t));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void run_cone(const CLI::App& sub, const ConeOptions& o) {
  if (o.model.empty()) throw UsageError("--model", "is required (accepted: " + enum_names_text<ValueModel>() + ")");
  if (o.d.empty()) throw UsageError("--d", "is required (a list: a,b,c or lo:hi:xk)");
  if (o.T.empty()) throw UsageError("--T", "is required (a list: a,b,c or lo:hi:xk)");
  if (o.out.empty()) throw UsageError("--out", "is required (the CSV file to write)");
  const auto ds = parse_int_list("--d", o.d, 2, 1L << 16);
  const auto Ts = parse_int_list("--T", o.T, 1, 1L << 20);
  const auto hs = parse_int_list("--heads", o.heads, 1, 1L << 15);
  const auto specs = parse_positions(o.positions);

  ConePoint base;
  base.model = *parse_enum<ValueModel>(o.model);  // CLI11 checked the name
  base.mu = o.mu;
  base.sigma = o.sigma;
  std::vector<double> params{0.0};  // the model's swept parameter: theta (cap), m (gauss)
  if (base.model == ValueModel::cap) params = parse_double_list("--theta", o.theta);
  if (base.model == ValueModel::gauss) params = parse_double_list("--m", o.m);
  const McEstimator estimator = *parse_enum<McEstimator>(o.estimator);
  validate_estimator(base, estimator);

  std::vector<ConePoint> points;
  for (long d : ds)
    for (long T : Ts)
      for (long h : hs)
        for (double v : params)
          for (const std::string& mask : o.masks) {
            ConePoint p = base;
            p.mask = *parse_enum<AttnMask>(mask);
            p.d = static_cast<int>(d);
            p.T = static_cast<int>(T);
            p.heads = static_cast<int>(h);
            if (p.model == ValueModel::cap) p.theta = v;
            if (p.model == ValueModel::gauss) p.m = v;
            validate(p);  // all bad input is reported before any work
            points.push_back(p);
          }

  const std::filesystem::path csv_path = o.out, cfg_path = config_path_for(csv_path);
  check_output_file("--out", csv_path, o.force);
  check_output_file("--out", cfg_path, o.force);

  McOptions mo;
  mo.trials = o.trials;
  mo.seed = o.seed;
  mo.threads = o.threads;
  mo.estimator = estimator;
  AtomicFile csv(csv_path);
  csv.stream() << cone_csv_header();
  std::cout << cone_table_header();
  for (const ConePoint& p : points) {
    const McResult r = simulate(p, positions_for(specs, p.T), mo);
    write_cone_csv_rows(csv.stream(), p, r, o.trials, o.seed);
    std::cout << cone_table_rows(p, r) << std::flush;
  }
  AtomicFile cfg(cfg_path);
  cfg.stream() << resolved_config(sub);
  csv.commit();
  cfg.commit();
  std::cout << "wrote " << csv_path.string() << " (" << points.size() << " points) and " << cfg_path.string() << "\n";
}

void add_cone(CLI::App& theory) {
  auto* cone =
      theory.add_subcommand("cone", "Cone model of value vectors: closed forms vs Monte Carlo, swept over d and T");
  auto o = std::make_shared<ConeOptions>();
  cone->add_option("--model", o->model,
                   "Value-vector model: axis (mu u + sigma s), cap (uniform in a cap), gauss (m u + sigma z)")
      ->check(CLI::IsMember(enum_names<ValueModel>()));
  cone->add_option("--mask", o->masks,
                   "Attention masks: causal, bidirectional (the control), or both: causal,bidirectional")
      ->delimiter(',')
      ->default_str(enum_name(AttnMask::causal))
      ->check(CLI::IsMember(enum_names<AttnMask>()));
  cone->add_option("--d", o->d, "Value dimensions (all heads), list a,b,c or lo:hi:xk, each in 2..65536");
  cone->add_option("--T", o->T, "Sequence lengths, list a,b,c or lo:hi:xk, each in 1..1048576");
  cone->add_option("--theta", o->theta, "cap: half-angles in radians, list, each in (0, pi]");
  cone->add_option("--mu", o->mu, "axis: component along the axis u")->check(finite_number(FiniteBound::any));
  cone->add_option("--sigma", o->sigma, "axis: norm of the complement part; gauss: per-coordinate std dev (> 0)")
      ->check(finite_number(FiniteBound::positive));
  cone->add_option("--m", o->m, "gauss: means along the axis u, list a,b,c or lo:hi:xk");
  cone->add_option("--heads", o->heads, "Heads H splitting d into H blocks of d/H >= 2, list");
  cone->add_option("--positions", o->positions,
                   "Positions t to report: all, or a list of integers and T-k, e.g. 0,1,T-1 (t >= T dropped)");
  cone->add_option("--trials", o->trials, "Monte-Carlo sequences per point (>= 2)")
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{1} << 40));
  cone->add_option("--seed", o->seed, "Base seed; each point derives its own from it and its parameters")
      ->check(unsigned_integer());
  cone->add_option("--threads", o->threads, "Worker threads (results do not depend on it)")->check(CLI::Range(1, 1024));
  cone->add_option("--estimator", o->estimator,
                   "Monte-Carlo estimator: full (samples all T*d coordinates; the independent check of the closed "
                   "forms) or radial (gauss only: per head the axis component and squared norm of the rest, "
                   "O(T*heads) draws per sequence, the same law)")
      ->check(CLI::IsMember(enum_names<McEstimator>()));
  cone->add_option("--out", o->out, "CSV file to write (the resolved config goes next to it as .config.toml)");
  cone->add_flag("--force", o->force, "Overwrite existing output files");
  add_config_option(*cone, [cone, o] { run_cone(*cone, *o); });
}

}  // namespace

void add_theory_commands(CLI::App& app) {
  auto* theory = app.add_subcommand("theory", "Cone model in closed form and by Monte Carlo; the hand-wired circuit");
  theory->require_subcommand(1);
  add_cone(*theory);
  add_theory_circuit_command(*theory);
}

}  // namespace p0sim::cli
