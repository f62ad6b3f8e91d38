#include "sim/probe_metrics.hpp"

namespace p0sim::sim {

namespace {

// A metric of the residual stream (after the block, and after its attention sublayer).
template <double StateMetrics::*field>
LayerMetric state(std::string name, std::string definition, std::string unit, bool in_results, bool mid_in_summary) {
  return {std::move(name),
          std::move(definition),
          std::move(unit),
          [](const LayerProbe& lp) { return lp.state.*field; },
          [](const LayerProbe& lp) { return lp.mid.*field; },
          in_results,
          mid_in_summary,
          field};
}

// A summary of the layer's heads.
template <double SinkMetrics::*field>
LayerMetric heads(std::string name, std::string definition) {
  return {std::move(name),
          std::move(definition),
          "fraction",
          [](const LayerProbe& lp) { return lp.sink.*field; },
          nullptr,
          true,
          false};
}

std::vector<LayerMetric> make_table() {
  return {
      state<&StateMetrics::p0_norm>("p0_norm", "mean over probe sequences of ||h_0||", "norm", false, false),
      state<&StateMetrics::rest_norm>("rest_norm", "median over t >= 1 of the mean over sequences of ||h_t||", "norm",
                                      false, false),
      state<&StateMetrics::p0_norm_ratio>("p0_norm_ratio", "p0_norm / rest_norm", "ratio", true, true),
      state<&StateMetrics::p1_norm_ratio>("p1_norm_ratio", "mean ||h_1|| / rest_norm", "ratio", false, true),
      state<&StateMetrics::p0_cos>("p0_cos", "mean pairwise cosine of h_0 across probe sequences", "cosine", true,
                                   true),
      state<&StateMetrics::massive_ratio>("massive_ratio", "max |h_0,i| / median over (t, i) of |h_t,i|", "ratio",
                                          false, false),
      state<&StateMetrics::massive_ratio_rest>(
          "massive_ratio_rest", "max over t >= 1 of |h_t,i| / median over (t, i) of |h_t,i|", "ratio", false, false),
      heads<&SinkMetrics::sink_rate>("sink_rate",
                                     "fraction of the layer's heads whose attention to key 0 exceeds sink-eps"),
      heads<&SinkMetrics::attn_to_0>("attn_to_0", "mean over the layer's heads of the attention to key 0"),
      heads<&SinkMetrics::attn_to_1>("attn_to_1", "mean over the layer's heads of the attention to key 1"),
      heads<&SinkMetrics::sink_1>("sink_1",
                                  "Gu et al.'s Sink_1: fraction of (probe sequence, head) pairs whose mean attention "
                                  "to key 0 exceeds sink-eps"),
  };
}

}  // namespace

const std::vector<LayerMetric>& layer_metrics() {
  static const std::vector<LayerMetric> table = make_table();
  return table;
}

}  // namespace p0sim::sim
