#pragma once
// The options of `p0sim train` (model, data, optimiser, probes, seed), shared with `p0sim sweep`,
// whose base point is any train option and whose grid keys are their names: one definition of
// each option's help text and accepted range.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace p0sim::cli {

struct TrainOptions {
  int vocab = 64, d_model = 64, heads = 4, layers = 2, d_ff = 0, seq_len = 32, batch = 32;
  std::string task = "markov", schedule = "constant", mask = "causal", attn = "softmax", pos = "none", norm = "rms",
              act = "gelu";
  int steps = 1000, warmup = 0, triggers = 4, log_every = 100, threads = 1;
  double lr = 1e-3, weight_decay = 0.1, beta1 = 0.9, beta2 = 0.95, clip = 1.0, markov_alpha = 0.1;
  double trigger_prob = 0.1;
  std::string filler = "uniform";
  int keys = 4, values = 8;
  int probe_every = 50, probe_batch = 64;
  double emerge_attn = 0.5, emerge_accuracy = 0.9, emerge_ratio = 2.0, emerge_cos = 0.9, sink_eps = 0.3;
  std::uint64_t seed = 1;
  bool bos = false, force = false, ablate = false;
  std::string out;
  std::string warm_start = "none";  // `train` only (not a sweep key)
  double warm_start_noise = 0.01;
  int checkpoint_every = 0;  // `train` only
  std::string resume;        // `train` only: a run directory to continue
};

// Registers every train option except --threads, --out and --force on `sub`, bound to `o`.
void add_train_options(CLI::App& sub, TrainOptions& o);

}  // namespace p0sim::cli
