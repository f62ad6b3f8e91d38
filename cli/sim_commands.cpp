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
#include "cli/train_options.hpp"
#include "study/run_options.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"
#include "sim/checkpoint.hpp"
#include "sim/npy.hpp"
#include "sim/train.hpp"
#include "study/mpi_session.hpp"
#include "study/warm_start.hpp"

namespace p0sim::cli {
namespace fs = std::filesystem;
using namespace p0sim::sim;

namespace {

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
      std::fprintf(stderr, "\r[%s%s] %d/%d loss %.4f  %.0f tokens/s ",
                   std::string(static_cast<std::size_t>(done), '#').c_str(),
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

// The step count a finished run (one with summary.json) was trained to; nullopt while it is unfinished.
std::optional<int> finished_steps(const fs::path& run) {
  const fs::path summary = run / "summary.json";
  if (!fs::exists(summary)) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(read_text_file(summary, "--resume"), nullptr, false);
  const nlohmann::json* steps = j.is_object() && j.contains("config") && j["config"].is_object() &&
                                        j["config"].contains("steps") && j["config"]["steps"].is_number_integer()
                                    ? &j["config"]["steps"]
                                    : nullptr;
  if (!steps || steps->get<long long>() < 0 || steps->get<long long>() > 1000000000)
    throw UsageError("--resume", "'" + summary.string() + "' is not a p0sim run summary (no config.steps in 0..1e9)");
  return static_cast<int>(steps->get<long long>());
}

// A finished run continues to more steps only where that changes none of its steps so far: under a
// constant schedule (a cosine's learning rate at every step depends on --steps), from the checkpoint
// of its last step.
void check_extension(const std::string& run, int finished, const TrainConfig& c, const FingerprintCheck& fits) {
  study::check_steps_extension("the run in '" + run + "'", finished, c.steps, c.schedule);
  const LoadedCheckpoint last = load_latest_checkpoint(checkpoint_dir(run), fits, c.steps, "--resume");
  // A newer checkpoint than the finished step is one an earlier extension wrote before it was cut
  // short: the same options, so continuing from it is continuing from the finished step.
  if (!last.found || last.state.step < finished)
    throw UsageError("--resume", "the run in '" + run + "' keeps no checkpoint of its last step (" +
                                     std::to_string(finished) +
                                     "), which an extension continues from (train with --checkpoint-every)");
}

struct TrainCommand {
  int threads = 1;
  bool force = false;
  std::string out, resume;
  std::unique_ptr<RunOptionFlags> run;
};

void add_train(CLI::App& app) {
  auto o = std::make_shared<TrainCommand>();
  auto* sub = app.add_subcommand("train", "Train the tiny transformer from scratch on a synthetic task");
  o->run = std::make_unique<RunOptionFlags>(*sub, study::kEveryRun | study::kTrainOnly);
  sub->add_option("--threads", o->threads, "Threads splitting each step's batch (results never depend on it)")
      ->check(CLI::Range(1, 1024));
  auto* out = sub->add_option("--out", o->out, "Run directory (created; must be empty unless --resume or --force)");
  auto* force = sub->add_flag("--force", o->force, "Write into a non-empty run directory, starting the run over");
  auto* resume =
      sub->add_option("--resume", o->resume,
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
    const study::OptionValues values = o->run->values();
    const study::RunSpec spec = values.spec();
    const std::string fingerprint = values.checkpoint_fingerprint();
    const FingerprintCheck fits = values.checkpoint_fits();
    TrainConfig c = spec.train;
    c.threads = o->threads;
    validate(c);
    const std::function<void(Model<float>&)> initialise = study::warm_start_initialiser(spec);
    const fs::path dir = o->out;
    // Under mpirun every rank trains the same run, each computing its share of every step's
    // chunks; rank 0 alone checks and writes the run directory.
    study::mpi::Session session;
    const bool root = session.is_root();
    const auto write_config = [&] {
      write_file_atomic(dir / "config.toml", "# resolved configuration of 'p0sim train'; pass back with --config\n" +
                                                 values.toml(study::kEveryRun | study::kTrainOnly));
    };
    bool go_on = true;
    try {
      if (!o->resume.empty()) {
        const std::optional<int> finished = root ? finished_steps(dir) : std::nullopt;
        if (finished && *finished == c.steps) {
          std::cout << "run in " << dir.string() << " already finished; nothing to do\n";
          go_on = false;
        } else if (root && ::access(dir.c_str(), W_OK) != 0) {
          throw UsageError("--resume", "directory '" + o->resume + "' is not writable");
        } else if (finished) {
          check_extension(o->resume, *finished, c, fits);
          // The summary first: a kill before config.toml is rewritten leaves an unfinished run at its
          // last checkpoint, which the same command extends (and a plain --resume finishes as it was).
          fs::remove(dir / "summary.json");
          write_config();
          std::cerr << "extending " << dir.string() << " from " << *finished << " to " << c.steps << " steps\n";
        }
      } else if (root) {
        std::error_code ec;
        if (!o->force && fs::is_directory(dir, ec) && !fs::is_empty(dir, ec))
          throw UsageError("--out", "'" + o->out + "' is not empty (pass --resume " + o->out +
                                        " to continue the run in it, or --force to start it over)");
        prepare_output_dir("--out", o->out, o->force);
        fs::remove_all(checkpoint_dir(dir), ec);  // a forced restart must never resume an older run's state
        write_config();
      }
    } catch (...) {
      session.root_ok(false);
      throw;
    }
    if (!session.root_ok(go_on)) return;  // rank 0 said why (and set the exit code)
    if (!o->resume.empty()) {
      checkpoint = load_latest_checkpoint(checkpoint_dir(dir), fits, c.steps, "--resume");
      if (root) {
        for (const std::string& why : checkpoint->skipped) std::cerr << "p0sim: warning: passed over " << why << "\n";
        write_config();  // options given again (a longer --steps) are now the run's: a later --resume reads them
      }
    }
    Model<float> model(c.model, c.batch);
    Progress progress(c.steps, c.log_every);
    TrainControl control;
    if (root) control.on_step = std::ref(progress);
    control.checkpoint_every = spec.checkpoint_every;
    control.checkpoint_location = checkpoint_dir(dir).string();
    control.save_checkpoint = [&](const TrainState& st) {
      if (root) write_checkpoint(checkpoint_dir(dir), fingerprint, st);
    };
    control.exchange = &session.chunk_exchange();
    if (root && checkpoint && !checkpoint->found)
      std::cerr << "resuming " << dir.string() << ": no checkpoint yet, starting from step 0\n";
    if (checkpoint && checkpoint->found) {
      control.resume = &checkpoint->state;
      if (root)
        std::cerr << "resuming " << dir.string() << " at step " << checkpoint->state.step << " of " << c.steps
                  << " from " << checkpoint->file.string() << "\n";
    }
    control.initialise = initialise;
    const TrainResult r = train(model, c, control);
    if (!root) return;
    write_run(dir, model, c, r);
    if (initialise) {
      const nlohmann::json report = study::warm_start_report(r.probes);
      write_file_atomic(dir / "warm_start.json", report.dump(2) + "\n");
      std::cout << "warm start from the circuit: " << report["outcome"].get<std::string>() << " (max p0_norm_ratio "
                << fmt9(static_cast<float>(report["initial"]["max_p0_norm_ratio"].get<double>())) << " -> "
                << fmt9(static_cast<float>(report["final"]["max_p0_norm_ratio"].get<double>())) << ")\n";
    }
    std::cout << "trained " << c.steps << " steps: final loss " << fmt9(static_cast<float>(r.final_loss));
    if (std::isfinite(r.entropy_floor))
      std::cout << " (task floor " << fmt9(static_cast<float>(r.entropy_floor)) << ")";
    std::cout << ", " << static_cast<long long>(r.tokens_per_s) << " tokens/s; wrote " << dir.string() << "\n";
    if (const nlohmann::json text = text_summary(c, r); !text.is_null() && !text["heldout_bits_per_byte"].is_null())
      std::cout << "held-out text: " << fmt9(static_cast<float>(text["heldout_bits_per_byte"].get<double>()))
                << " bits/byte (unigram entropy of the training bytes "
                << fmt9(static_cast<float>(text["unigram_bits_per_byte"].get<double>())) << ")\n";
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
  auto* sub =
      app.add_subcommand("eval", "Run trained weights on token rows; write loss, logits, hidden states, attention");
  sub->add_option("--weights", o->weights, "Weights directory (RUN_DIR/weights)")->check(CLI::ExistingDirectory);
  sub->add_option("--tokens", o->tokens, "Token rows, .npy of shape (N, T+1), int32 or int64")
      ->check(CLI::ExistingFile);
  sub->add_flag("--grads", o->grads, "Also write grads/<name>.npy, the gradient of the mean loss");
  sub->add_option("--threads", o->threads, "Threads splitting each step's batch (results never depend on it)")
      ->check(CLI::Range(1, 1024));
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
    LoadedWeights w;
    try {
      w = load_weights(o->weights, "--weights", static_cast<int>(T));
    } catch (const ConfigError& e) {
      // The rows' length is the tokens' shape: a length the weights cannot take is the tokens' fault.
      if (e.field != "seq_len") throw;
      throw UsageError("--tokens", e.message);
    }
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
    nlohmann::json j{{"loss", r.loss},        {"rows", N},          {"positions", P}, {"predictions", N * P},
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
