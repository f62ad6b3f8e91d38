#pragma once
// Probes during training: every K steps the DESIGN.md section 5 metrics of a fixed probe
// batch, per layer and per head, the task's accuracy, and from the whole trace the emergence step
// of each claim and the stage of each probe.
// Legend: N probe rows, T inputs per row, P positions the model sees (T, or T+1 with BOS),
// C d_model, H heads, L layers.
//
// Position 0 of every metric is the first position the model sees: with --bos that is the BOS
// position (the question there is whether heads sink onto BOS), else the first real token.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/data.hpp"
#include "sim/model.hpp"
#include "sim/probes.hpp"

namespace p0sim::sim {

struct ProbeConfig {
  int every = 0;                 // probe before the first step, after every K-th and after the last; 0 = off
  int batch = 64;                // N probe rows: batch 0 of data stream 1, the same at every probe
  double emerge_attn = 0.5;      // identification: active-query attention to key 0 at least this
  double emerge_accuracy = 0.9;  // identification: copy accuracy at least this (firstrecall)
  double emerge_ratio = 2.0;     // high-norm direction: p0_norm_ratio at least this ...
  double emerge_cos = 0.9;       // ... and p0_cos at least this, at one layer
  double sink_eps = 0.3;         // a head sinks when alpha_0 > eps (sink_rate)
};

// Throws UsageError naming the option (--probe-every, --probe-batch, --emerge-*, --sink-eps).
void validate(const ProbeConfig& c);

struct LayerProbe {
  StateMetrics state;                // residual stream after block l
  StateMetrics mid;                  // after block l's attention sublayer
  SinkMetrics sink;                  // over the layer's heads, eps = sink_eps
  std::vector<HeadAttention> heads;  // (H)
};

struct ProbeRecord {
  int step = 0;                 // finished optimiser steps (0 = the initial weights)
  double loss = 0.0;            // mean loss on the probe batch
  double accuracy = 0.0;        // argmax accuracy at the task's active queries (NaN if it has none)
  double first_accuracy = 0.0;  // firstrecall: at the first trigger of each row (NaN otherwise)
  double query_accuracy = 0.0;  // firstrecall-lookup: at the lookup queries (NaN otherwise)
  long scored = 0, first_scored = 0, query_scored = 0;  // how many predictions each accuracy counts
  std::vector<LayerProbe> layers;                       // (L)
  // Derived by analyse_trace:
  bool identification = false, high_norm = false, sink = false;
  std::string stage = "none";
};

// Sets r's accuracy, first_accuracy, query_accuracy and their counts from a forward's logits
// (N,P,V) on `rows` (N,T+1) whose input positions the task marked with `kinds` (N,T): the argmax of
// the prediction at input t (model position t, or t+1 with BOS) against token t+1. Prober::probe
// scores its batch with it; any model's logits (float or double) can be scored the same way.
template <typename Scalar>
void score_accuracy(ProbeRecord& r, const Scalar* logits, const std::int32_t* rows, const Kind* kinds, int N,
                    const ModelConfig& mc);

// The metrics of block l from `model`'s last forward (its last_batch() rows): the state after the
// block and after its attention sublayer, its heads and their value drain. active: (N,P) flags of
// the task's active queries (attn_to_0_active is NaN without them); sink_eps: the sink threshold.
LayerProbe probe_layer(const Model<float>& model, int l, const std::vector<char>* active, double sink_eps);

// Runs the probe batch through its own Model (sized for the probe batch), so the training model's
// buffers, and therefore training, are untouched.
class Prober {
 public:
  Prober(const ModelConfig& model, const DataGenerator& data, const ProbeConfig& config);
  ProbeRecord probe(const Model<float>& trained, int step);
  const std::vector<std::int32_t>& rows() const { return rows_; }  // (N,T+1)
  const std::vector<Kind>& kinds() const { return kinds_; }        // (N,T)
  const std::vector<char>& active() const { return active_; }      // (N,P) active queries, model positions
  // The probe's own model (its parameters are the last probed ones): ablations are set on it.
  Model<float>& model() { return model_; }

 private:
  ProbeConfig config_;
  Task task_;
  Model<float> model_;
  std::vector<std::int32_t> rows_;  // (N,T+1)
  std::vector<Kind> kinds_;         // (N,T)
  std::vector<char> active_;        // (N,P) in model positions
};

// Sets each record's claims and stage, and returns the emergence step of each claim: the first
// probe step from which it holds at every later probe (nullopt if it does not hold at the last).
//  identification (firstrecall only): accuracy >= emerge_accuracy and, at some head of some layer,
//    attention to key 0 averaged over the active (trigger) queries >= emerge_attn;
//  high_norm: at some layer, p0_norm_ratio >= emerge_ratio and p0_cos >= emerge_cos;
//  sink: sink_rate > 0 (alpha_0 > sink_eps) at some layer after the first (layer 0 if L = 1).
// Stage per probe, after Peng et al.'s three stages (checked in this order):
//  transitional: a sink exists and at a sinking layer the mass is spread over the first
//    positions: attn_to_1 >= 0.5 * attn_to_0, or position 1 is high-norm too (p1_norm_ratio >=
//    emerge_ratio at a high-norm layer);
//  final: a sink exists on position 0 and the high-norm direction lives in the first two blocks;
//  early: the high-norm direction exists but only in a deeper block (or no sink uses it yet);
//  none: otherwise.
struct Emergence {
  std::optional<int> identification, high_norm, sink;
};
Emergence analyse_trace(std::vector<ProbeRecord>& trace, const ProbeConfig& c, Task task);

// trace.csv, one row per (step, layer):
//   step, layer, then for the state after block `layer`: p0_norm, rest_norm, p0_norm_ratio,
//   p1_norm_ratio, p0_cos, massive_ratio; the same after its attention sublayer with a mid_
//   prefix; sink_rate, attn_to_0, attn_to_1 (means over the layer's heads); the probe batch's loss,
//   accuracy, first_accuracy (empty when undefined) and the probe's stage.
// heads.csv, one row per (step, layer, head): the columns of kHeadMetrics (sim/probes.hpp).
void write_trace_csv(const std::filesystem::path& path, const std::vector<ProbeRecord>& trace);
void write_heads_csv(const std::filesystem::path& path, const std::vector<ProbeRecord>& trace);
// The "probe" section of summary.json.
nlohmann::json probe_summary(const std::vector<ProbeRecord>& trace, const Emergence& e, const ProbeConfig& c, bool bos);

}  // namespace p0sim::sim
