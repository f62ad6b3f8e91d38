#pragma once
// What one trained run reports, and the one schema every results.csv (experiment and train
// sweep) is written with. Each result metric is declared once (results.cpp): its column name, a
// one-line definition, whether it has one value per layer, its unit, and whether verdicts
// summarise it. Undefined values are empty cells (common/format.hpp: csv_number).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/probe_metrics.hpp"
#include "sim/train.hpp"
#include "study/stats.hpp"

namespace p0sim::study {

// Final metrics of one run, from its last probe. NaN where undefined.
struct RunMetrics {
  double final_loss = 0.0;              // training loss of the last step
  double loss = 0.0;                    // probe-batch loss at the last probe
  double task_accuracy = 0.0;           // argmax accuracy at the task's active queries
  double first_trigger_accuracy = 0.0;  // at the first trigger of each row (firstrecall)
  double l1_active_attn_to_0 = 0.0;     // max over the sink-claim layer's heads of active-query attention to key 0
  std::vector<sim::LayerProbe> layers;  // (L) of the last probe; per-layer columns read them
  std::optional<int> emerged_identification, emerged_high_norm, emerged_sink;
  std::optional<int> emerged_all;  // the step from which all three claims hold
  // Fractions of the run's probes at which the claim held, whenever: a state that comes and goes
  // has a share above 0 and no emergence step.
  double high_norm_probes = 0.0, sink_probes = 0.0;
  std::string stage;  // of the last probe
};
RunMetrics run_metrics(const sim::TrainResult& r);
// A per-layer metric (sim/probe_metrics.hpp) of every layer of the run, in layer order.
std::vector<double> layer_values(const RunMetrics& m, const std::string& metric);

struct ResultMetric {
  std::string name;        // column name; per-layer metrics get one column name_l<l> per layer
  std::string definition;  // one line, for docs and plot titles
  bool per_layer = false;
  std::string unit;         // "nats", "fraction", "ratio", "cosine", "step", "stage"
  bool in_verdict = false;  // verdicts give its mean and interval per variant
  std::function<double(const RunMetrics&, std::size_t layer)> value;  // NaN: undefined
  std::function<std::string(const RunMetrics&)> text;                 // text columns only (stage)
};
// Every result metric, in column order (per-layer ones after the others, layer by layer): the run
// metrics declared in results.cpp, then the per-layer probe metrics marked in_results in
// sim/probe_metrics.cpp.
const std::vector<ResultMetric>& result_metrics();

// The metric columns for up to L layers: (column name, metric, layer).
struct ResultColumn {
  std::string name;
  const ResultMetric* metric;
  std::size_t layer;
};
std::vector<ResultColumn> result_columns(std::size_t L);

// The column every results file (experiment, train and theory sweep) holds the engine version in,
// after the identity columns: it says which arithmetic computed the row (common/engine_version.hpp).
inline constexpr const char* kEngineVersionColumn = "engine_version";

// results.csv: the identity columns (variant, or the grid keys; then seed_index, seed), the engine
// version, then the metric columns. header() ends with a newline, row() does not.
std::string results_header(const std::vector<std::string>& identity, std::size_t L);
std::string results_row(const std::vector<std::string>& identity, const RunMetrics& m, std::size_t L);

// Names a column had in older results files, and the name it has now.
struct RenamedColumn {
  const char* old_name;
  const char* name;
};
const std::vector<RenamedColumn>& renamed_columns();

}  // namespace p0sim::study
