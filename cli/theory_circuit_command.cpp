// `p0sim theory circuit`: the hand-wired circuit swept over (d, T, alpha, beta, c) and the masks.
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
#include "study/circuit.hpp"

namespace p0sim::cli {
namespace {

using namespace p0sim::study;

struct CircuitCliOptions {
  std::string d, T;
  std::string alpha = "-1";
  std::string beta = "1";
  std::string c = "100";
  int vocab = 0;
  int heads = 2;
  double neuron_scale = 3.0;
  double sink_gain = 1000.0;
  int sequences = 256;
  int models = 8;
  double sink_eps = 0.3;
  std::string mask = "both";
  std::uint64_t seed = 1;
  std::string out;
  bool force = false;
};

std::vector<double> finite_list(const std::string& option, const std::string& text) {
  auto values = parse_double_list(option, text);
  for (double v : values)
    if (!std::isfinite(v)) throw UsageError(option, "values must be finite");
  return values;
}

void run_circuit_command(const CLI::App& sub, const CircuitCliOptions& o) {
  if (o.d.empty()) throw UsageError("--d", "is required (a list: a,b,c or lo:hi:xk)");
  if (o.T.empty()) throw UsageError("--T", "is required (a list: a,b,c or lo:hi:xk)");
  if (o.out.empty()) throw UsageError("--out", "is required (the CSV file to write)");
  const auto ds = parse_int_list("--d", o.d, 4, 4096);
  const auto Ts = parse_int_list("--T", o.T, 2, 4096);
  const auto alphas = finite_list("--alpha", o.alpha);
  const auto betas = finite_list("--beta", o.beta);
  const auto cs = finite_list("--c", o.c);
  std::vector<sim::Mask> masks;
  if (o.mask != "bidirectional") masks.push_back(sim::Mask::causal);
  if (o.mask != "causal") masks.push_back(sim::Mask::bidirectional);

  std::vector<CircuitPoint> points;
  for (long d : ds)
    for (long T : Ts)
      for (double alpha : alphas)
        for (double beta : betas)
          for (double c : cs)
            for (sim::Mask mask : masks) {
              CircuitPoint p;
              p.d = static_cast<int>(d);
              p.T = static_cast<int>(T);
              p.vocab = o.vocab;
              p.heads = o.heads;
              p.alpha = alpha;
              p.beta = beta;
              p.c = c;
              p.neuron_scale = o.neuron_scale;
              p.sink_gain = o.sink_gain;
              p.mask = mask;
              validate(p);  // all bad input is reported before any work
              points.push_back(p);
            }

  const std::filesystem::path csv_path = o.out, cfg_path = config_path_for(csv_path);
  check_output_file("--out", csv_path, o.force);
  check_output_file("--out", cfg_path, o.force);

  CircuitOptions co;
  co.sequences = o.sequences;
  co.models = o.models;
  co.seed = o.seed;
  co.sink_eps = o.sink_eps;
  AtomicFile csv(csv_path);
  csv.stream() << circuit_csv_header();
  std::cout << circuit_table_header();
  for (const CircuitPoint& p : points) {
    const CircuitResult r = run_circuit(p, co);
    csv.stream() << circuit_csv_row(p, co, r);
    std::cout << circuit_table_row(p, r) << std::flush;
  }
  AtomicFile cfg(cfg_path);
  cfg.stream() << resolved_config(sub);
  csv.commit();
  cfg.commit();
  std::cout << "wrote " << csv_path.string() << " (" << points.size() << " rows) and " << cfg_path.string() << "\n";
}

}  // namespace

void add_theory_circuit_command(CLI::App& theory) {
  auto* sub = theory.add_subcommand(
      "circuit", "Hand-wired 2-layer circuit in the engine's forward: identification, amplification, sink");
  auto o = std::make_shared<CircuitCliOptions>();
  sub->add_option("--d", o->d, "Model widths d, list a,b,c or lo:hi:xk, each in 4..4096");
  sub->add_option("--T", o->T, "Sequence lengths, list a,b,c or lo:hi:xk, each in 2..4096");
  sub->add_option("--alpha", o->alpha,
                  "Value map v_j = alpha e_j + beta u: alpha list (-1 cancels position 0's token)");
  sub->add_option("--beta", o->beta, "Value map: beta list, each > 0 (position 0's state is beta u at alpha = -1)");
  sub->add_option("--c", o->c, "Amplification: the MLP writes c s_t w, s_0 = 1 at alpha = -1; list, each >= 0");
  sub->add_option("--vocab", o->vocab, "Vocabulary V in 2..d-2 (Gaussian embeddings); 0 means d/2")
      ->check(CLI::Range(0, 4094));
  sub->add_option("--heads", o->heads, "Heads (all identical); must divide every d")->check(CLI::Range(1, 4096));
  sub->add_option("--neuron-scale", o->neuron_scale, "The MLP neuron's pre-activation a R at a full readout (> 0)")
      ->check(finite_number(FiniteBound::positive));
  sub->add_option("--sink-gain", o->sink_gain, "Layer-1 score G between two states along w (>= 0)")
      ->check(finite_number(FiniteBound::nonnegative));
  sub->add_option("--sequences", o->sequences, "Random uniform-token sequences per model (>= 2)")
      ->check(CLI::Range(2, 1 << 24));
  sub->add_option("--models", o->models, "Independent embedding tables per point (each a draw of the readout law)")
      ->check(CLI::Range(1, 1 << 16));
  sub->add_option("--sink-eps", o->sink_eps, "Sink threshold eps on a head's attention to key 0")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--mask", o->mask, "Run the causal mask, the bidirectional control, or both on the same weights")
      ->check(CLI::IsMember({"causal", "bidirectional", "both"}));
  sub->add_option("--seed", o->seed, "Base seed; each point derives its own from it and its parameters (not the mask)")
      ->check(unsigned_integer());
  sub->add_option("--out", o->out, "CSV file to write (the resolved config goes next to it as .config.toml)");
  sub->add_flag("--force", o->force, "Overwrite existing output files");
  add_config_option(*sub, [sub, o] { run_circuit_command(*sub, *o); });
}

}  // namespace p0sim::cli
