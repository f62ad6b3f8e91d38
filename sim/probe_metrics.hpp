#pragma once
// Every per-layer probe metric, declared once: its name, a one-line definition, its unit and
// where it is read from a layer's probe. trace.csv's columns, summary.json's final layers and the
// per-layer columns of every results.csv (study/results.cpp) are written from this table, so a
// new metric is one field in probes.hpp, its computation in probes.cpp and one line here.
#include <string>
#include <vector>

#include "sim/probe_trace.hpp"

namespace p0sim::sim {

struct LayerMetric {
  std::string name;
  std::string definition;
  std::string unit;                             // "norm", "ratio", "cosine", "fraction"
  double (*value)(const LayerProbe&);           // of the residual stream after block l (state metrics)
  double (*mid)(const LayerProbe&);             // the same after block l's attention sublayer, or nullptr
  bool in_results = false;                      // a results.csv column name_l<l> and a verdict metric
  bool mid_in_summary = false;                  // summary.json's final layers also give mid_<name>
  double StateMetrics::*state_field = nullptr;  // where a state metric lives (checkpoints store it)
};

// In trace.csv column order (mid_ columns follow the state ones; see write_trace_csv); also the
// order checkpoints store each probe's state metrics in.
const std::vector<LayerMetric>& layer_metrics();

}  // namespace p0sim::sim
