#pragma once
// Component ablations at the end of training: which parts of a trained model carry
// identification (finding position 0) and amplification (its high norm) and the sink. Each layer-0
// head and each block's MLP is replaced, one at a time, by zeros (zero ablation) or by its mean
// output over the probe batch (mean ablation), and the probe's metrics are measured again on the
// same batch.
#include <string>
#include <vector>

#include "sim/model.hpp"
#include "sim/probe_trace.hpp"

namespace p0sim::sim {

struct AblationRow {
  std::string component;  // "none" (the intact model), "l0.head<h>", "l<l>.mlp"
  std::string mode;       // "none", "zero", "mean"
  ProbeRecord probe;      // the probe's metrics with that component ablated
};

// Rows in a fixed order: none; then per component (layer-0 heads, then MLPs by layer) zero, mean.
// `prober` must hold the probe batch of the run; its model is left without ablation.
std::vector<AblationRow> run_ablations(const Model<float>& trained, Prober& prober);

// ablations.csv: component, mode, loss, accuracy, first_accuracy, l1_active_attn_to_0 (max over
// the heads of layer 1, or layer 0 when L = 1, of their attention from active queries to key 0),
// then per layer l: p0_norm_ratio_l, p0_cos_l, sink_rate_l, attn_to_0_l.
std::string ablations_csv(const std::vector<AblationRow>& rows);

}  // namespace p0sim::sim
