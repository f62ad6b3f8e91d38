// The train options, registered once for `p0sim train` and `p0sim sweep` (see train_options.hpp).
#include "cli/train_options.hpp"

#include <limits>
#include <vector>

#include "cli/commands.hpp"
#include "sim/data.hpp"

namespace p0sim::cli {

void add_train_options(CLI::App& sub, TrainOptions& o) {
  sub.add_option("--vocab", o.vocab, "Vocabulary size V (tokens 0..V-1)")->check(CLI::Range(2, 1 << 20));
  sub.add_option("--d-model", o.d_model, "Model width C")->check(CLI::Range(1, 1 << 16));
  sub.add_option("--heads", o.heads, "Attention heads H (C divisible by H)")->check(CLI::Range(1, 1 << 12));
  sub.add_option("--layers", o.layers, "Transformer blocks L")->check(CLI::Range(1, 256));
  sub.add_option("--d-ff", o.d_ff, "MLP width F (0 = 4 * d-model)")->check(CLI::Range(0, 1 << 20));
  sub.add_option("--seq-len", o.seq_len, "Input tokens per row T (rows hold T+1 tokens)")->check(CLI::Range(2, 1 << 16));
  sub.add_option("--batch", o.batch, "Rows per step B")->check(CLI::Range(1, 1 << 16));
  sub.add_option("--task", o.task, "Synthetic task")
      ->check(CLI::IsMember([] {
        std::vector<std::string> names;
        for (sim::Task t : sim::kAllTasks) names.push_back(sim::to_string(t));
        return names;
      }()));
  sub.add_option("--markov-alpha", o.markov_alpha,
                  "Dirichlet concentration of the bigram rows (markov, backcopy, firstrecall --filler markov)")
      ->check(CLI::Range(1e-3, 1e6));
  sub.add_option("--triggers", o.triggers, "Trigger tokens k of backcopy, backcopy-indep, firstrecall and firstrecall-lookup (1 <= k < V)")
      ->check(CLI::Range(1, 1 << 20));
  sub.add_option("--trigger-prob", o.trigger_prob,
                  "firstrecall, backcopy-indep: trigger insertion probability per position, in (0, 1); lookup: "
                  "probability of a fact and of a query, in (0, 0.5]; firstrecall-lookup: of a fact, a query and a "
                  "trigger, in (0, 1/3]")
      ->check(CLI::Range(1e-9, 1.0 - 1e-9));
  sub.add_option("--filler", o.filler, "firstrecall, backcopy-indep: filler tokens i.i.d. uniform, or a bigram chain")
      ->check(CLI::IsMember({"uniform", "markov"}));
  sub.add_option("--keys", o.keys, "lookup: keys K (vocab >= values*(1+keys)+keys+2)")->check(CLI::Range(1, 1 << 20));
  sub.add_option("--values", o.values, "lookup: values per key")->check(CLI::Range(1, 1 << 20));
  sub.add_option("--probe-every", o.probe_every,
                  "Probe metrics (trace.csv, heads.csv) before step 1, every K steps and at the end; 0 = off")
      ->check(CLI::Range(0, 1000000000));
  sub.add_option("--probe-batch", o.probe_batch, "Rows of the fixed probe batch (data stream 1)")->check(CLI::Range(2, 1 << 16));
  sub.add_flag("--ablate", o.ablate,
               "At the end, zero- and mean-ablate each layer-0 head and each MLP on the probe batch (ablations.csv)");
  sub.add_option("--emerge-attn", o.emerge_attn, "Identification: active-query attention to key 0 at least this")
      ->check(CLI::Range(0.0, 1.0));
  sub.add_option("--emerge-accuracy", o.emerge_accuracy, "Identification: firstrecall copy accuracy at least this")
      ->check(CLI::Range(0.0, 1.0));
  sub.add_option("--emerge-ratio", o.emerge_ratio, "High-norm direction: p0_norm_ratio at least this (with --emerge-cos)")
      ->check(CLI::Range(1e-9, 1e12));
  sub.add_option("--emerge-cos", o.emerge_cos, "High-norm direction: p0_cos at least this (with --emerge-ratio)")
      ->check(CLI::Range(0.0, 1.0));
  sub.add_option("--sink-eps", o.sink_eps, "A head sinks when its attention to key 0 exceeds this")->check(CLI::Range(0.0, 1.0));
  sub.add_option("--steps", o.steps, "Optimiser steps")->check(CLI::Range(0, 1000000000));
  sub.add_option("--lr", o.lr, "Peak learning rate (finite, > 0)")->check(finite_number(FiniteBound::positive));
  sub.add_option("--warmup", o.warmup, "Linear warm-up steps")->check(CLI::Range(0, 1000000000));
  sub.add_option("--schedule", o.schedule, "After warm-up: constant, or cosine down to 0 at --steps")
      ->check(CLI::IsMember({"constant", "cosine"}));
  sub.add_option("--weight-decay", o.weight_decay, "AdamW decoupled weight decay (matrices only)")->check(CLI::Range(0.0, 10.0));
  sub.add_option("--beta1", o.beta1, "AdamW beta1, in [0, 1)")->check(CLI::Range(0.0, 0.999999999));
  sub.add_option("--beta2", o.beta2, "AdamW beta2, in [0, 1)")->check(CLI::Range(0.0, 0.999999999));
  sub.add_option("--clip", o.clip, "Global gradient-norm clip (0 = off)")->check(CLI::Range(0.0, 1e12));
  sub.add_option("--seed", o.seed, "Seed of the initial weights, the task structure and the batches")
      ->check(unsigned_integer());
  sub.add_option("--mask", o.mask, "Attention mask")->check(CLI::IsMember({"causal", "bidirectional", "prefix-bidirectional"}));
  sub.add_option("--attn", o.attn, "Attention normalisation")->check(CLI::IsMember({"softmax", "softmax1", "sigmoid"}));
  sub.add_option("--pos", o.pos, "Positional encoding")->check(CLI::IsMember({"none", "rope", "absolute"}));
  sub.add_flag("--bos", o.bos, "Prepend a BOS token (id V) to every row");
  sub.add_option("--norm", o.norm, "Normalisation")->check(CLI::IsMember({"rms", "layer"}));
  sub.add_option("--act", o.act, "MLP activation")->check(CLI::IsMember({"gelu", "relu"}));
  sub.add_option("--log-every", o.log_every, "Steps between progress lines when stderr is not a terminal")
      ->check(CLI::Range(1, 1000000000));
}

}  // namespace p0sim::cli
