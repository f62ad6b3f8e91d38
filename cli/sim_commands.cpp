// `p0sim train` and `p0sim eval`: parse, validate, dispatch to sim/, write the run directory.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/commands.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"
#include "sim/checkpoint.hpp"
#include "sim/npy.hpp"
#include "sim/train.hpp"

namespace p0sim::cli {
namespace fs = std::filesystem;
using namespace p0sim::sim;

namespace {


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
  bool bos = false, force = false;
  std::string out;
  int checkpoint_every = 0;
  std::string resume;  // a run directory to continue
};

template <typename E>
E parse_enum(const std::string& s, std::initializer_list<E> values) {
  for (E e : values)
    if (to_string(e) == s) return e;
  throw UsageError("enum", "unknown value '" + s + "'");  // unreachable behind IsMember
}

TrainConfig to_train_config(const TrainOptions& o) {
  TrainConfig c;
  c.model.vocab = o.vocab;
  c.model.d_model = o.d_model;
  c.model.heads = o.heads;
  c.model.layers = o.layers;
  c.model.d_ff = o.d_ff > 0 ? o.d_ff : 4 * o.d_model;
  c.model.seq_len = o.seq_len;
  c.model.mask = parse_enum(o.mask, {Mask::causal, Mask::bidirectional, Mask::prefix_bidirectional});
  c.model.attn = parse_enum(o.attn, {Attn::softmax, Attn::softmax1, Attn::sigmoid});
  c.model.pos = parse_enum(o.pos, {PosEnc::none, PosEnc::rope, PosEnc::absolute});
  c.model.bos = o.bos;
  c.model.norm = parse_enum(o.norm, {Norm::rms, Norm::layer});
  c.model.act = parse_enum(o.act, {Act::gelu, Act::relu});
  c.data.task = parse_enum(o.task, {Task::uniform, Task::markov, Task::backcopy, Task::repeat, Task::firstrecall, Task::lookup});
  c.data.trigger_prob = o.trigger_prob;
  c.data.filler = parse_enum(o.filler, {Filler::uniform, Filler::markov});
  c.data.keys = o.keys;
  c.data.values = o.values;
  c.probe.every = o.probe_every;
  c.probe.batch = o.probe_batch;
  c.probe.emerge_attn = o.emerge_attn;
  c.probe.emerge_accuracy = o.emerge_accuracy;
  c.probe.emerge_ratio = o.emerge_ratio;
  c.probe.emerge_cos = o.emerge_cos;
  c.probe.sink_eps = o.sink_eps;
  c.data.vocab = o.vocab;
  c.data.seq_len = o.seq_len;
  c.data.markov_alpha = o.markov_alpha;
  c.data.triggers = o.triggers;
  c.data.seed = o.seed;
  c.batch = o.batch;
  c.steps = o.steps;
  c.lr = o.lr;
  c.warmup = o.warmup;
  c.schedule = o.schedule == "cosine" ? Schedule::cosine : Schedule::constant;
  c.adamw.weight_decay = o.weight_decay;
  c.adamw.beta1 = o.beta1;
  c.adamw.beta2 = o.beta2;
  c.clip = o.clip;
  c.seed = o.seed;
  c.threads = o.threads;
  c.log_every = o.log_every;
  return c;
}

// One progress line: a redrawn bar on a terminal, else a plain line every --log-every steps.
class Progress {
 public:
  Progress(int steps, int log_every) : steps_(steps), every_(log_every), tty_(::isatty(STDERR_FILENO) == 1) {}
  void operator()(const StepLog& e) {
    window_tokens_s_ += 1.0 / std::max(e.tokens_per_s, 1e-300);
    ++window_;
    const bool last = e.step == steps_;
    if (tty_) {
      if (e.step % std::max(1, steps_ / 200) != 0 && !last) return;
      const int width = 30, done = steps_ > 0 ? width * e.step / steps_ : width;
      std::fprintf(stderr, "\r[%s%s] %d/%d loss %.4f  %.0f tokens/s ", std::string(static_cast<std::size_t>(done), '#').c_str(),
                   std::string(static_cast<std::size_t>(width - done), ' ').c_str(), e.step, steps_, e.loss, rate());
      if (last) std::fputc('\n', stderr);
    } else {
      if (e.step % every_ != 0 && !last) return;
      std::fprintf(stderr, "step %d/%d loss %.6f lr %.3g grad_norm %.4g tokens/s %.0f\n", e.step, steps_, e.loss, e.lr,
                   e.grad_norm, rate());
    }
    window_ = 0;
    window_tokens_s_ = 0.0;
  }

 private:
  // Harmonic mean of the per-step rates = tokens over time across the window.
  double rate() const { return window_tokens_s_ > 0.0 ? window_ / window_tokens_s_ : 0.0; }
  int steps_, every_;
  bool tty_;
  int window_ = 0;
  double window_tokens_s_ = 0.0;
};

void add_train(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  auto* sub = app.add_subcommand("train", "Train the tiny transformer from scratch on a synthetic task");
  sub->add_option("--vocab", o->vocab, "Vocabulary size V (tokens 0..V-1)")->check(CLI::Range(2, 1 << 20));
  sub->add_option("--d-model", o->d_model, "Model width C")->check(CLI::Range(1, 1 << 16));
  sub->add_option("--heads", o->heads, "Attention heads H (C divisible by H)")->check(CLI::Range(1, 1 << 12));
  sub->add_option("--layers", o->layers, "Transformer blocks L")->check(CLI::Range(1, 256));
  sub->add_option("--d-ff", o->d_ff, "MLP width F (0 = 4 * d-model)")->check(CLI::Range(0, 1 << 20));
  sub->add_option("--seq-len", o->seq_len, "Input tokens per row T (rows hold T+1 tokens)")->check(CLI::Range(2, 1 << 16));
  sub->add_option("--batch", o->batch, "Rows per step B")->check(CLI::Range(1, 1 << 16));
  sub->add_option("--task", o->task, "Synthetic task")
      ->check(CLI::IsMember({"uniform", "markov", "backcopy", "repeat", "firstrecall", "lookup"}));
  sub->add_option("--markov-alpha", o->markov_alpha,
                  "Dirichlet concentration of the bigram rows (markov, backcopy, firstrecall --filler markov)")
      ->check(CLI::Range(1e-3, 1e6));
  sub->add_option("--triggers", o->triggers, "Trigger tokens k of backcopy and firstrecall (1 <= k < V)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--trigger-prob", o->trigger_prob,
                  "firstrecall: trigger insertion probability per position, in (0, 1); lookup: probability of a "
                  "fact and of a query, in (0, 0.5]")
      ->check(CLI::Range(1e-9, 1.0 - 1e-9));
  sub->add_option("--filler", o->filler, "firstrecall: filler tokens i.i.d. uniform, or a bigram chain")
      ->check(CLI::IsMember({"uniform", "markov"}));
  sub->add_option("--keys", o->keys, "lookup: keys K (vocab >= values*(1+keys)+keys+2)")->check(CLI::Range(1, 1 << 20));
  sub->add_option("--values", o->values, "lookup: values per key")->check(CLI::Range(1, 1 << 20));
  sub->add_option("--probe-every", o->probe_every,
                  "Probe metrics (trace.csv, heads.csv) before step 1, every K steps and at the end; 0 = off")
      ->check(CLI::Range(0, 1000000000));
  sub->add_option("--probe-batch", o->probe_batch, "Rows of the fixed probe batch (data stream 1)")->check(CLI::Range(2, 1 << 16));
  sub->add_option("--emerge-attn", o->emerge_attn, "Identification: active-query attention to key 0 at least this")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--emerge-accuracy", o->emerge_accuracy, "Identification: firstrecall copy accuracy at least this")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--emerge-ratio", o->emerge_ratio, "High-norm direction: p0_norm_ratio at least this (with --emerge-cos)")
      ->check(CLI::Range(1e-9, 1e12));
  sub->add_option("--emerge-cos", o->emerge_cos, "High-norm direction: p0_cos at least this (with --emerge-ratio)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--sink-eps", o->sink_eps, "A head sinks when its attention to key 0 exceeds this")->check(CLI::Range(0.0, 1.0));
  sub->add_option("--steps", o->steps, "Optimiser steps")->check(CLI::Range(0, 1000000000));
  sub->add_option("--lr", o->lr, "Peak learning rate (finite, > 0)")->check(finite_number(FiniteBound::positive));
  sub->add_option("--warmup", o->warmup, "Linear warm-up steps")->check(CLI::Range(0, 1000000000));
  sub->add_option("--schedule", o->schedule, "After warm-up: constant, or cosine down to 0 at --steps")
      ->check(CLI::IsMember({"constant", "cosine"}));
  sub->add_option("--weight-decay", o->weight_decay, "AdamW decoupled weight decay (matrices only)")->check(CLI::Range(0.0, 10.0));
  sub->add_option("--beta1", o->beta1, "AdamW beta1, in [0, 1)")->check(CLI::Range(0.0, 0.999999999));
  sub->add_option("--beta2", o->beta2, "AdamW beta2, in [0, 1)")->check(CLI::Range(0.0, 0.999999999));
  sub->add_option("--clip", o->clip, "Global gradient-norm clip (0 = off)")->check(CLI::Range(0.0, 1e12));
  sub->add_option("--seed", o->seed, "Seed of the initial weights, the task structure and the batches")
      ->check(unsigned_integer());
  sub->add_option("--threads", o->threads, "Threads (recorded; results never depend on it)")->check(CLI::Range(1, 1024));
  sub->add_option("--mask", o->mask, "Attention mask")->check(CLI::IsMember({"causal", "bidirectional", "prefix-bidirectional"}));
  sub->add_option("--attn", o->attn, "Attention normalisation")->check(CLI::IsMember({"softmax", "softmax1", "sigmoid"}));
  sub->add_option("--pos", o->pos, "Positional encoding")->check(CLI::IsMember({"none", "rope", "absolute"}));
  sub->add_flag("--bos", o->bos, "Prepend a BOS token (id V) to every row");
  sub->add_option("--norm", o->norm, "Normalisation")->check(CLI::IsMember({"rms", "layer"}));
  sub->add_option("--act", o->act, "MLP activation")->check(CLI::IsMember({"gelu", "relu"}));
  sub->add_option("--log-every", o->log_every, "Steps between progress lines when stderr is not a terminal")
      ->check(CLI::Range(1, 1000000000));
  sub->add_option("--checkpoint-every", o->checkpoint_every,
                  "Write the whole training state to RUN_DIR/checkpoint/ every N steps and after the last (0 = off)")
      ->check(CLI::Range(0, 1000000000));
  auto* out = sub->add_option("--out", o->out, "Run directory (created; must be empty unless --resume or --force)");
  auto* force = sub->add_flag("--force", o->force, "Write into a non-empty run directory, starting the run over");
  auto* resume = sub->add_option("--resume", o->resume,
                                 "Continue the run in RUN_DIR from its newest checkpoint (options from RUN_DIR/config.toml)")
                     ->check(CLI::ExistingDirectory);
  add_config_option(*sub, [sub, o] {
    std::optional<LoadedCheckpoint> checkpoint;
    if (!o->resume.empty()) {
      const fs::path run = o->resume;
      if (!fs::is_regular_file(run / "config.toml"))
        throw UsageError("--resume", "'" + o->resume + "' is not a train run directory (no config.toml)");
      // The run's own options; options given again on the command line win, and the checkpoint
      // then refuses anything that changes the training.
      apply_config_file(*sub, (run / "config.toml").string(), "--resume");
      if (o->force) throw UsageError("--resume", "cannot be combined with --force (a resumed run keeps its results)");
      o->out = o->resume;
    }
    if (o->out.empty()) throw UsageError("--out", "a run directory is required");
    const TrainConfig c = to_train_config(*o);
    validate(c);
    const fs::path dir = o->out;
    if (!o->resume.empty()) {
      if (fs::exists(dir / "summary.json")) {
        std::cout << "run in " << dir.string() << " already finished; nothing to do\n";
        return;
      }
      if (::access(dir.c_str(), W_OK) != 0) throw UsageError("--resume", "directory '" + o->resume + "' is not writable");
      checkpoint = load_latest_checkpoint(checkpoint_dir(dir), c, "--resume");
      for (const std::string& why : checkpoint->skipped) std::cerr << "p0sim: warning: passed over " << why << "\n";
    } else {
      std::error_code ec;
      if (!o->force && fs::is_directory(dir, ec) && !fs::is_empty(dir, ec))
        throw UsageError("--out", "'" + o->out + "' is not empty (pass --resume " + o->out +
                                      " to continue the run in it, or --force to start it over)");
      prepare_output_dir("--out", o->out, o->force);
      fs::remove_all(checkpoint_dir(dir), ec);  // a forced restart must never resume an older run's state
      write_file_atomic(dir / "config.toml", resolved_config(*sub));
    }
    Model<float> model(c.model, c.batch);
    Progress progress(c.steps, c.log_every);
    TrainControl control;
    control.on_step = std::ref(progress);
    control.checkpoint_every = o->checkpoint_every;
    control.checkpoint_location = checkpoint_dir(dir).string();
    control.save_checkpoint = [&](const TrainState& st) { write_checkpoint(checkpoint_dir(dir), c, st); };
    if (checkpoint && !checkpoint->found)
      std::cerr << "resuming " << dir.string() << ": no checkpoint yet, starting from step 0\n";
    if (checkpoint && checkpoint->found) {
      control.resume = &checkpoint->state;
      std::cerr << "resuming " << dir.string() << " at step " << checkpoint->state.step << " of " << c.steps << " from "
                << checkpoint->file.string() << "\n";
    }
    const TrainResult r = train(model, c, control);
    write_run(dir, model, c, r);
    std::cout << "trained " << c.steps << " steps: final loss " << fmt9(static_cast<float>(r.final_loss))
              << " (task floor " << fmt9(static_cast<float>(r.entropy_floor)) << "), "
              << static_cast<long long>(r.tokens_per_s) << " tokens/s; wrote " << dir.string() << "\n";
    if (!r.probes.empty()) {
      const ProbeRecord& last = r.probes.back();
      auto step = [](const std::optional<int>& s) { return s ? std::to_string(*s) : std::string("never"); };
      std::cout << "probe at step " << last.step << ": ";
      if (last.scored > 0) std::cout << "task accuracy " << fmt9(static_cast<float>(last.accuracy)) << ", ";
      std::cout << "stage " << last.stage << "; emerged: identification " << step(r.emergence.identification)
                << ", high-norm " << step(r.emergence.high_norm) << ", sink " << step(r.emergence.sink) << "\n";
    }
  });
  // A resumed run takes its directory and options from RUN_DIR; a second source would be ambiguous.
  resume->excludes(out)->excludes(force)->excludes(sub->get_option("--config"));
}

struct EvalOptions {
  std::string weights, tokens, out;
  bool grads = false, force = false;
  int threads = 1;
};

void add_eval(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  auto* sub = app.add_subcommand("eval", "Run trained weights on token rows; write loss, logits, hidden states, attention");
  sub->add_option("--weights", o->weights, "Weights directory (RUN_DIR/weights)")->check(CLI::ExistingDirectory);
  sub->add_option("--tokens", o->tokens, "Token rows, .npy of shape (N, T+1), int32 or int64")->check(CLI::ExistingFile);
  sub->add_flag("--grads", o->grads, "Also write grads/<name>.npy, the gradient of the mean loss");
  sub->add_option("--threads", o->threads, "Threads (recorded; results never depend on it)")->check(CLI::Range(1, 1024));
  sub->add_option("--out", o->out, "Output directory (created; must be empty unless --force)");
  sub->add_flag("--force", o->force, "Write into a non-empty output directory, replacing its files");
  add_config_option(*sub, [sub, o] {
    if (o->weights.empty()) throw UsageError("--weights", "a weights directory is required");
    if (o->tokens.empty()) throw UsageError("--tokens", "a token file (.npy) is required");
    if (o->out.empty()) throw UsageError("--out", "an output directory is required");
    NpyArray tok;
    try {
      tok = read_npy(o->tokens);
    } catch (const UsageError& e) {
      throw UsageError("--tokens", e.what());
    }
    if (tok.dtype != "<i4" && tok.dtype != "<i8")
      throw UsageError("--tokens", "'" + o->tokens + "' has dtype " + tok.dtype + ", expected int32 or int64");
    if (tok.shape.size() != 2 || tok.shape[0] < 1 || tok.shape[1] < 3)
      throw UsageError("--tokens", "'" + o->tokens + "' must have shape (N, T+1) with N >= 1 and T >= 2");
    const std::int64_t N = tok.shape[0], T = tok.shape[1] - 1;
    if (T > (1 << 16)) throw UsageError("--tokens", "'" + o->tokens + "': rows longer than 65537 tokens");
    const LoadedWeights w = load_weights(o->weights, "--weights", static_cast<int>(T));
    const auto ids = tok.as_int64();
    std::vector<std::int32_t> rows(ids.size());
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (ids[k] < 0 || ids[k] >= w.config.vocab)
        throw UsageError("--tokens", "'" + o->tokens + "': token " + std::to_string(ids[k]) + " at row " +
                                         std::to_string(k / static_cast<std::size_t>(T + 1)) + " is outside 0.." +
                                         std::to_string(w.config.vocab - 1));
      rows[k] = static_cast<std::int32_t>(ids[k]);
    }
    prepare_output_dir("--out", o->out, o->force);
    const fs::path dir = o->out;
    // Chunks of at most 64 rows bound the activation memory; results do not depend on it.
    Model<float> model(w.config, static_cast<int>(std::min<std::int64_t>(N, 64)));
    model.params() = Eigen::Map<const Eigen::VectorXf>(w.params.data(), static_cast<Eigen::Index>(w.params.size()));
    const EvalResult r = evaluate(model, rows.data(), N, o->grads);

    const ModelConfig& c = w.config;
    const std::int64_t P = c.positions(), L = c.layers;
    write_npy(dir / "logits.npy", r.logits.data(), {N, P, c.vocab});
    write_npy(dir / "hidden.npy", r.hidden.data(), {L + 1, N, P, c.d_model});
    write_npy(dir / "attn.npy", r.attention.data(), {L, N, c.heads, P, P});
    if (o->grads) {
      std::error_code ec;
      fs::create_directories(dir / "grads", ec);
      if (ec) throw RunError("cannot create " + (dir / "grads").string() + ": " + ec.message());
      for (const TensorInfo& t : model.layout())
        write_npy(dir / "grads" / (t.name + ".npy"), r.grads.data() + t.offset,
                  std::vector<std::int64_t>(t.shape.begin(), t.shape.end()));
    }
    nlohmann::json j{{"loss", r.loss}, {"rows", N}, {"positions", P}, {"predictions", N * P},
                     {"weights", o->weights}, {"tokens", o->tokens}};
    write_file_atomic(dir / "loss.json", j.dump(2) + "\n");
    write_file_atomic(dir / "config.toml", resolved_config(*sub));
    std::cout << "mean loss " << fmt17(r.loss) << " over " << N * P << " predictions; wrote " << dir.string() << "\n";
  });
}

}  // namespace

void add_sim_commands(CLI::App& app) {
  add_train(app);
  add_eval(app);
}

}  // namespace p0sim::cli
