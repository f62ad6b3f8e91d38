#include "study/results.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/engine_version.hpp"
#include "common/errors.hpp"
#include "common/format.hpp"
#include "common/stats.hpp"
#include "sim/probes.hpp"

namespace p0sim::study {

namespace {

double step_value(const std::optional<int>& s) { return s ? static_cast<double>(*s) : kNaN; }

ResultMetric run_metric(std::string name, std::string definition, std::string unit, bool in_verdict,
                        std::function<double(const RunMetrics&)> value) {
  return {std::move(name),
          std::move(definition),
          false,
          std::move(unit),
          in_verdict,
          [value = std::move(value)](const RunMetrics& m, std::size_t) { return value(m); },
          {}};
}

std::vector<ResultMetric> make_metrics() {
  std::vector<ResultMetric> t = {
      run_metric("loss", "probe-batch mean cross-entropy at the last probe", "nats", true,
                 [](const RunMetrics& m) { return m.loss; }),
      run_metric("task_accuracy", "argmax accuracy at the task's active queries (triggers, lookup queries)", "fraction",
                 true, [](const RunMetrics& m) { return m.task_accuracy; }),
      run_metric("first_trigger_accuracy", "argmax accuracy at the first trigger of each row (firstrecall)", "fraction",
                 true, [](const RunMetrics& m) { return m.first_trigger_accuracy; }),
      run_metric("l1_active_attn_to_0",
                 "max over the sink-claim layer's heads of the active queries' attention to key 0", "fraction", true,
                 [](const RunMetrics& m) { return m.l1_active_attn_to_0; }),
      run_metric("final_loss", "training-batch mean cross-entropy of the last step", "nats", false,
                 [](const RunMetrics& m) { return m.final_loss; }),
      run_metric("emerged_identification", "first probe step from which identification holds to the end", "step", false,
                 [](const RunMetrics& m) { return step_value(m.emerged_identification); }),
      run_metric("emerged_high_norm", "first probe step from which the high-norm P0 holds to the end", "step", false,
                 [](const RunMetrics& m) { return step_value(m.emerged_high_norm); }),
      run_metric("emerged_sink", "first probe step from which the sink holds to the end", "step", false,
                 [](const RunMetrics& m) { return step_value(m.emerged_sink); }),
      run_metric("emerged_all", "first probe step from which all three claims hold to the end", "step", false,
                 [](const RunMetrics& m) { return step_value(m.emerged_all); }),
      run_metric("high_norm_probes", "fraction of the probes at which the high-norm P0 holds, to the end or not",
                 "fraction", true, [](const RunMetrics& m) { return m.high_norm_probes; }),
      run_metric("sink_probes", "fraction of the probes at which the sink holds, to the end or not", "fraction", true,
                 [](const RunMetrics& m) { return m.sink_probes; }),
      {"stage",
       "Peng et al.'s stage at the last probe (none, early, transitional, final)",
       false,
       "stage",
       false,
       {},
       [](const RunMetrics& m) { return m.stage; }},
  };
  for (const sim::LayerMetric& lm : sim::layer_metrics()) {
    if (!lm.in_results) continue;
    t.push_back({lm.name,
                 lm.definition + " (of layer l)",
                 true,
                 lm.unit,
                 true,
                 [value = lm.value](const RunMetrics& m, std::size_t l) {
                   return l < m.layers.size() ? value(m.layers[l]) : kNaN;
                 },
                 {}});
  }
  return t;
}

std::string cell(const ResultColumn& c, const RunMetrics& m) {
  return c.metric->text ? c.metric->text(m) : csv_number(c.metric->value(m, c.layer));
}

}  // namespace

RunMetrics run_metrics(const sim::TrainResult& r) {
  if (r.probes.empty()) throw RunError("a run has no probes: its metrics come from them");
  const sim::ProbeRecord& last = r.probes.back();
  RunMetrics m;
  m.final_loss = r.final_loss;
  m.loss = last.loss;
  m.task_accuracy = last.scored > 0 ? last.accuracy : kNaN;
  m.first_trigger_accuracy = last.first_scored > 0 ? last.first_accuracy : kNaN;
  const int L = static_cast<int>(last.layers.size());
  m.l1_active_attn_to_0 = kNaN;
  if (L > 0) {
    for (const sim::HeadAttention& h : last.layers[static_cast<std::size_t>(sim::first_sink_layer(L))].heads)
      if (std::isfinite(h.attn_to_0_active))
        m.l1_active_attn_to_0 = std::isfinite(m.l1_active_attn_to_0)
                                    ? std::max(m.l1_active_attn_to_0, h.attn_to_0_active)
                                    : h.attn_to_0_active;
  }
  m.layers = last.layers;
  const sim::Emergence& e = r.emergence;
  m.emerged_identification = e.identification;
  m.emerged_high_norm = e.high_norm;
  m.emerged_sink = e.sink;
  if (e.identification && e.high_norm && e.sink) m.emerged_all = std::max({*e.identification, *e.high_norm, *e.sink});
  m.stage = last.stage;
  const auto share = [&](bool sim::ProbeRecord::*claim) {
    const auto held =
        std::count_if(r.probes.begin(), r.probes.end(), [&](const sim::ProbeRecord& p) { return p.*claim; });
    return static_cast<double>(held) / static_cast<double>(r.probes.size());
  };
  m.high_norm_probes = share(&sim::ProbeRecord::high_norm);
  m.sink_probes = share(&sim::ProbeRecord::sink);
  return m;
}

std::vector<double> layer_values(const RunMetrics& m, const std::string& metric) {
  for (const sim::LayerMetric& lm : sim::layer_metrics())
    if (lm.name == metric) {
      std::vector<double> out;
      for (const sim::LayerProbe& lp : m.layers) out.push_back(lm.value(lp));
      return out;
    }
  throw std::logic_error("no per-layer metric '" + metric + "'");
}

const std::vector<ResultMetric>& result_metrics() {
  static const std::vector<ResultMetric> table = make_metrics();
  return table;
}

std::vector<ResultColumn> result_columns(std::size_t L) {
  std::vector<ResultColumn> out;
  for (const ResultMetric& m : result_metrics())
    if (!m.per_layer) out.push_back({m.name, &m, 0});
  for (std::size_t l = 0; l < L; ++l)
    for (const ResultMetric& m : result_metrics())
      if (m.per_layer) out.push_back({m.name + "_l" + std::to_string(l), &m, l});
  return out;
}

std::string results_header(const std::vector<std::string>& identity, std::size_t L) {
  std::string h;
  for (const std::string& k : identity) h += (h.empty() ? "" : ",") + k;
  h += std::string(",") + kEngineVersionColumn;
  for (const ResultColumn& c : result_columns(L)) h += "," + c.name;
  return h + "\n";
}

std::string results_row(const std::vector<std::string>& identity, const RunMetrics& m, std::size_t L) {
  std::string row;
  for (const std::string& v : identity) row += (row.empty() ? "" : ",") + v;
  row += "," + std::to_string(kEngineVersion);
  for (const ResultColumn& c : result_columns(L)) row += "," + cell(c, m);
  return row;
}

const std::vector<RenamedColumn>& renamed_columns() {
  static const std::vector<RenamedColumn> renamed = {
      {"copy_accuracy", "task_accuracy"},  // it holds every task's accuracy, not only copies
      {"probe_loss", "loss"},              // train sweeps wrote the probe loss under this name
      {"identification_step", "emerged_identification"},
      {"high_norm_step", "emerged_high_norm"},
      {"sink_step", "emerged_sink"},
      {"emergence_step", "emerged_all"},
  };
  return renamed;
}

}  // namespace p0sim::study
