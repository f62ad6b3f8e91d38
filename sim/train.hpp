#pragma once
// The training loop (forward, zero_grad, backward, clip, optimiser step) and everything a run leaves
// on disk besides its config.toml (which the CLI writes): train.csv, summary.json,
// weights/<name>.npy and weights/config.json. Also the reverse: loading weights back and
// evaluating a model on token rows (`p0sim eval`).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/ablation.hpp"
#include "sim/data.hpp"
#include "sim/model.hpp"
#include "sim/optimizer.hpp"
#include "sim/probe_trace.hpp"

namespace p0sim::sim {

struct ChunkExchange;  // sim/parallel_step.hpp

enum class Schedule { constant, cosine, count };

constexpr std::array<std::string_view, 2> enum_names_of(Schedule) { return {"constant", "cosine"}; }

struct TrainConfig {
  ModelConfig model;
  DataConfig data;  // data.vocab and data.seq_len must equal the model's
  int batch = 32;   // B
  int steps = 1000;
  double lr = 1e-3;  // peak learning rate, > 0
  int warmup = 0;    // linear warm-up steps: lr * (s+1)/warmup for step s < warmup
  Schedule schedule = Schedule::constant;
  Init init = Init::gpt2;  // the initial weights' scheme (Model::init)
  OptimizerConfig optim;   // adamw or sgd, weight decay and its parameter group
  double clip = 0.0;       // global gradient-norm clip; 0 = off
  std::uint64_t seed = 1;
  int threads = 1;  // threads splitting each step's batch (sim/parallel_step.hpp; results never depend on it)
  int log_every = 100;
  ProbeConfig probe;    // probes during training (off unless probe.every > 0)
  bool ablate = false;  // at the end, ablate each layer-0 head and each MLP (ablations.csv; needs probes)
};

// Throws UsageError naming the option (--batch, --steps, --lr, --warmup, --clip, ... and the
// model's and data's own checks).
void validate(const TrainConfig& c);

// Learning rate of step s (0-based): linear warm-up over `warmup` steps, then constant, or a
// half cosine from lr at the end of warm-up down to 0 at s = steps (so the last step, s = steps-1,
// still moves a little).
double learning_rate(const TrainConfig& c, int step);

struct StepLog {
  int step = 0;       // 1-based count of finished steps
  double loss = 0.0;  // mean loss of the step's batch (before the update)
  double lr = 0.0;
  double grad_norm = 0.0;     // global L2 norm before clipping
  double tokens_per_s = 0.0;  // B*T / wall time of this step (data, forward, backward, update)
};

struct TrainResult {
  std::vector<StepLog> log;  // every step
  double final_loss = 0.0;   // loss of the last step
  double wall_seconds = 0.0;
  double tokens_per_s = 0.0;           // over the whole run
  double entropy_floor = 0.0;          // of the task for the model's predictions (NaN if unknown)
  std::vector<ProbeRecord> probes;     // in step order; empty when probing is off
  Emergence emergence;                 // from probes
  std::vector<AblationRow> ablations;  // with TrainConfig::ablate
};

// Everything a run needs to continue exactly where it stopped (sim/checkpoint.hpp stores it).
// The data and probe streams are counter-based (DataGenerator::fill(stream, batch index)), so
// their positions follow from `step`.
struct TrainState {
  int step = 0;                       // finished optimiser steps
  std::vector<float> params;          // flat, in parameter_layout order
  std::vector<float> adam_m, adam_v;  // the optimiser state (Optimizer::first_moment, second_moment)
  std::int64_t adam_steps = 0;
  std::vector<StepLog> log;         // steps 1..step
  std::vector<ProbeRecord> probes;  // probes taken so far (raw fields)
  double wall_seconds = 0.0;        // training time so far, over every session
};

// How a run is driven besides its configuration.
struct TrainControl {
  std::function<void(const StepLog&)> on_step;  // sees every step as it finishes (optional)
  // Every `checkpoint_every` steps (0 = never) and after the last step, `save_checkpoint` gets the
  // whole state; `checkpoint_at_end` alone asks for the final one only.
  int checkpoint_every = 0;
  bool checkpoint_at_end = false;
  std::function<void(const TrainState&)> save_checkpoint;
  std::string checkpoint_location;     // named in the divergence message
  const TrainState* resume = nullptr;  // continue from this state instead of the initial weights
  // Initial weights instead of the seeded init (a warm start; ignored when resuming).
  std::function<void(Model<float>&)> initialise;
  // The processes each step is split across (sim/parallel_step.hpp); nullptr = this one only.
  const ChunkExchange* exchange = nullptr;
};

// Initialises `model` from the seed (or control.initialise, or the resume state) and trains it in place. Throws
// RunError if the loss or the gradient stops being finite, naming the step, the first tensor holding a non-finite value
// and the last good checkpoint.
TrainResult train(Model<float>& model, const TrainConfig& c, const TrainControl& control);
TrainResult train(Model<float>& model, const TrainConfig& c, const std::function<void(const StepLog&)>& on_step = {});

// Where a non-finite value first shows up in the model after a forward (and backward, when
// `gradients_too`): parameters in layout order, then activations in forward order, then gradients
// from the loss backwards. Returns e.g. "gradient of blocks.1.mlp.w2" or "" if all are finite.
std::string locate_non_finite(const Model<float>& model, bool gradients_too);

nlohmann::json to_json(const ModelConfig& c);
nlohmann::json to_json(const TrainConfig& c);
// Reads what to_json(ModelConfig) wrote. Throws UsageError(option, ...) on anything malformed.
ModelConfig model_config_from_json(const nlohmann::json& j, const std::string& option);

// Writes dir/train.csv, dir/summary.json and dir/weights/ (each file atomically), and with probes
// dir/trace.csv and dir/heads.csv, and with ablations dir/ablations.csv.
// The text task's figures (null for other tasks): held-out bits per byte at the last probe (the
// probe batch reads the held-out documents) next to the training bytes' unigram entropy, and the
// corpus's size.
nlohmann::json text_summary(const TrainConfig& c, const TrainResult& r);

void write_run(const std::filesystem::path& dir, const Model<float>& model, const TrainConfig& c,
               const TrainResult& result);
// weights/<name>.npy for every parameter (float32, row-major) and weights/config.json.
void write_weights(const std::filesystem::path& weights_dir, const Model<float>& model);

// Reads weights/config.json and every tensor; a missing or mis-shaped tensor or a bad
// config.json is a UsageError naming `option`. `seq_len` overrides the stored T (so a NoPE or
// RoPE model runs on other lengths); pass 0 to keep it.
struct LoadedWeights {
  ModelConfig config;
  std::vector<float> params;  // in parameter_layout(config) order, ready for Model::params()
};
LoadedWeights load_weights(const std::filesystem::path& weights_dir, const std::string& option, int seq_len = 0);

// Runs the model over N token rows of shape (N, T+1) in chunks of model.max_batch().
struct EvalResult {
  double loss = 0.0;             // mean cross-entropy over all N*P predictions
  std::vector<float> logits;     // (N,P,V)
  std::vector<float> hidden;     // (L+1,N,P,C)
  std::vector<float> attention;  // (L,N,H,P,P)
  std::vector<float> grads;      // d(mean loss)/d(params), flat (empty unless asked)
};
EvalResult evaluate(Model<float>& model, const std::int32_t* rows, std::int64_t n_rows, bool with_grads);

}  // namespace p0sim::sim
