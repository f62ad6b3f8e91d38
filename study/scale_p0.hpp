#pragma once
// Scaling position 0's residual stream in a trained model (sim::Model::set_position0_scale): at each
// (layer, factor) the loss, its slope along log(factor), the later blocks' attention to key 0 and
// the task's accuracy. If the loss falls for factors above 1, a higher P0 norm would pay and
// training should find it; if it rises, training removes it. The slope at factor 1 is the training
// gradient's push along the P0 amplification. `p0sim scale-p0` writes the rows as a CSV.
// Legend: N rows, T inputs per row, P positions (T, or T+1 with BOS), H heads, L layers.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/data.hpp"
#include "sim/model.hpp"

namespace p0sim::study {

struct ScaleP0Options {
  std::vector<int> layers;      // blocks l in 0..L-1 after which position 0 is scaled
  std::vector<double> factors;  // finite, > 0
  double sink_eps = 0.3;        // a head sinks when its alpha_0 exceeds this (the probe's sink-eps)
  double fd_step = 1e-3;        // h of the central difference in log(factor)
};

struct ScaleP0Row {
  int layer = 0;
  double factor = 1.0;
  double loss = 0.0;              // mean cross-entropy (nats) over the N*P predictions
  double dloss_dlogfactor = 0.0;  // (loss(factor e^h) - loss(factor e^-h)) / (2h)
  double accuracy = 0.0;          // argmax accuracy at the task's scored positions, as the probe's (NaN if none)
  // (L) per block k, as trace.csv defines them (sim::head_attention, sim::sink_metrics): attn_to_0,
  // the mean over heads of alpha_0 (mean over rows and queries t >= 0 of the attention on key 0), and
  // sink_rate, the fraction of heads whose alpha_0 exceeds sink_eps; NaN for k <= layer.
  std::vector<double> attn_to_0, sink_rate;
};

// rows: (N,T+1) token rows and kinds: (N,T) what the task scores there (sim::DataGenerator::fill);
// params: trained weights in sim::parameter_layout(model) order. One row per (layer, factor),
// layers outer, each list in its given order. Everything runs in a Model<double> (the float weights
// widened), so the finite difference's rounding error (~1e-16 / h) is far below its O(h^2) error.
// A bad layer throws std::out_of_range; a factor not finite and > 0, or mismatched sizes,
// std::invalid_argument.
std::vector<ScaleP0Row> scale_p0(const sim::ModelConfig& model, std::span<const float> params,
                                 const std::vector<std::int32_t>& rows, const std::vector<sim::Kind>& kinds,
                                 const ScaleP0Options& o);

// The rows as CSV: layer,factor,loss,dloss_dlogfactor, then attn_to_0_l<k> and sink_rate_l<k> for
// every block k after the smallest scaled layer (empty where k <= the row's layer), then accuracy
// (empty when the task scores nothing). Numbers with 17 significant digits.
std::string scale_p0_csv(const std::vector<ScaleP0Row>& rows);

}  // namespace p0sim::study
