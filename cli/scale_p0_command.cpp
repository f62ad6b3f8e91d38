// `p0sim scale-p0`: in a trained run, scale position 0's residual stream after chosen blocks and
// measure the loss, its slope along log(factor), the later blocks' attention to key 0 and the task
// accuracy on the run's probe rows (study/scale_p0.hpp does the work; this parses and writes).
#include <Eigen/Core>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"
#include "common/lists.hpp"
#include "sim/data.hpp"
#include "sim/probe_trace.hpp"
#include "sim/train.hpp"
#include "study/config_toml.hpp"
#include "study/run_options.hpp"
#include "study/scale_p0.hpp"

namespace p0sim::cli {
namespace {

namespace fs = std::filesystem;

struct ScaleP0Command {
  std::string run_dir;
  std::string factors = "0.25,0.5,1,2,4,8,16";
  std::string layers;  // "": every block but the last
  int rows = 0;        // 0: the run's probe-batch
  std::string out;
  bool force = false;
};

void run_scale_p0(CLI::App& sub, const ScaleP0Command& o) {
  const fs::path dir = o.run_dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError("RUN_DIR", "'" + o.run_dir + "' is not a directory");
  if (!fs::is_regular_file(dir / "config.toml", ec))
    throw UsageError("RUN_DIR", "'" + o.run_dir + "' is not a train run directory (no config.toml)");
  if (!fs::is_directory(dir / "weights", ec))
    throw UsageError("RUN_DIR", "'" + o.run_dir + "' has no weights/ (the run has not finished)");
  if (o.out.empty()) throw UsageError("--out", "is required (the CSV file to write)");

  // The run as `p0sim report` and the Python module's load() read it: its options, then its weights.
  study::OptionValues values;
  for (const study::TomlEntry& e : study::read_toml(dir / "config.toml", "RUN_DIR").root)
    values.set(e.key, e.text, e.where);
  const sim::TrainConfig c = values.spec().train;
  const sim::LoadedWeights w = sim::load_weights(dir / "weights", "RUN_DIR");
  if (sim::to_json(w.config) != sim::to_json(c.model))
    throw UsageError("RUN_DIR", "'" + (dir / "weights" / "config.json").string() +
                                    "' does not describe the model of the run's config.toml");
  const int L = w.config.layers;

  study::ScaleP0Options so;
  so.sink_eps = c.probe.sink_eps;
  if (o.layers.empty()) {
    if (L < 2)
      throw UsageError("--layers",
                       "the run has one block, and scaling after it only meets the final norm: give "
                       "--layers 0 to measure that anyway");
    for (int l = 0; l + 1 < L; ++l) so.layers.push_back(l);
  } else {
    for (long l : parse_int_list("--layers", o.layers, 0, L - 1)) so.layers.push_back(static_cast<int>(l));
  }
  for (double f : parse_double_list("--factors", o.factors)) {
    if (!(f > 0.0))
      throw UsageError("--factors", "factor " + fmt_shortest(f) +
                                        " is not > 0 (accepted: finite numbers > 0, a list a,b,c or lo:hi:xk)");
    so.factors.push_back(f);
  }
  const int n_rows = o.rows > 0 ? o.rows : c.probe.batch;

  const fs::path csv_path = o.out, cfg_path = config_path_for(csv_path);
  check_output_file("--out", csv_path, o.force);
  check_output_file("--out", cfg_path, o.force);

  // The probe rows: batch 0 of data stream 1, as the training probes draw them (the first n_rows
  // rows of the run's probe batch when n_rows <= probe-batch: each row has its own counter).
  sim::ProbeConfig pc = c.probe;
  pc.batch = n_rows;
  const sim::DataGenerator data(c.data);
  const sim::Prober probe_rows(w.config, data, pc);
  const std::vector<study::ScaleP0Row> rows =
      study::scale_p0(w.config, w.params, probe_rows.rows(), probe_rows.kinds(), so);

  // The resolved config names what was used, also where the defaults came from the run.
  if (sub.get_option("--rows")->count() == 0) sub.get_option("--rows")->default_str(std::to_string(n_rows));
  if (o.layers.empty()) {
    std::string text;
    for (int l : so.layers) text += (text.empty() ? "" : ",") + std::to_string(l);
    sub.get_option("--layers")->default_str(text);
  }
  AtomicFile csv(csv_path);
  csv.stream() << study::scale_p0_csv(rows);
  AtomicFile cfg(cfg_path);
  cfg.stream() << resolved_config(sub);
  csv.commit();
  cfg.commit();

  std::printf("%5s %8s %12s %17s\n", "layer", "factor", "loss", "dloss/dlog(f)");
  for (const study::ScaleP0Row& r : rows)
    std::printf("%5d %8.4g %12.6f %17.6g\n", r.layer, r.factor, r.loss, r.dloss_dlogfactor);
  std::cout << "wrote " << csv_path.string() << " (" << rows.size() << " rows, " << n_rows << " probe rows) and "
            << cfg_path.string() << "\n";
}

}  // namespace

void add_scale_p0_command(CLI::App& app) {
  auto o = std::make_shared<ScaleP0Command>();
  auto* sub = app.add_subcommand(
      "scale-p0",
      "Scale position 0's residual stream of a trained run after a block: loss, its slope, later attention to key 0");
  sub->add_option("RUN_DIR", o->run_dir, "A finished train run directory (config.toml and weights/)")->required();
  sub->add_option("--factors", o->factors,
                  "Factors alpha multiplying position 0's residual stream, list a,b,c or lo:hi:xk, each finite > 0");
  sub->add_option("--layers", o->layers,
                  "Blocks l after which position 0 is scaled, list a,b,c, each in 0..L-1 (default every block but "
                  "the last, 0..L-2)")
      ->default_str("0..L-2");
  sub->add_option("--rows", o->rows,
                  "Probe rows: the first N rows of the run's probe batch (data stream 1), in 2..65536 (default the "
                  "run's probe-batch)")
      ->check(CLI::Range(2, 1 << 16))
      ->default_str("probe-batch");
  sub->add_option("--out", o->out, "CSV file to write (the resolved config goes next to it as .config.toml)");
  sub->add_flag("--force", o->force, "Overwrite existing output files");
  add_config_option(*sub, [sub, o] { run_scale_p0(*sub, *o); });
}

}  // namespace p0sim::cli
