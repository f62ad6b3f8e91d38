#include "sim/ablation.hpp"

#include <cmath>
#include <sstream>

#include "common/format.hpp"

namespace p0sim::sim {

std::vector<AblationRow> run_ablations(const Model<float>& trained, Prober& prober) {
  const ModelConfig& mc = trained.config();
  std::vector<AblationRow> rows;
  Model<float>& m = prober.model();
  m.clear_ablation();
  rows.push_back({"none", "none", prober.probe(trained, 0)});
  // Means come from the intact forward just run on the same batch.
  struct Component {
    std::string name;
    int layer, head;
    std::vector<float> mean;
  };
  std::vector<Component> components;
  for (int h = 0; h < mc.heads; ++h)
    components.push_back({"l0.head" + std::to_string(h), 0, h, m.mean_component_output(0, h)});
  for (int l = 0; l < mc.layers; ++l)
    components.push_back({"l" + std::to_string(l) + ".mlp", l, -1, m.mean_component_output(l, -1)});
  for (const Component& c : components) {
    for (const char* mode : {"zero", "mean"}) {
      m.set_ablation(c.layer, c.head, std::string(mode) == "zero" ? std::vector<float>{} : c.mean);
      rows.push_back({c.name, mode, prober.probe(trained, 0)});
    }
  }
  m.clear_ablation();
  return rows;
}

namespace {
std::string cell(double x) { return csv_number(x); }
}  // namespace

std::string ablations_csv(const std::vector<AblationRow>& rows) {
  std::ostringstream o;
  const std::size_t L = rows.empty() ? 0 : rows.front().probe.layers.size();
  o << "component,mode,loss,accuracy,first_accuracy,l1_active_attn_to_0";
  for (std::size_t l = 0; l < L; ++l)
    o << ",p0_norm_ratio_l" << l << ",p0_cos_l" << l << ",sink_rate_l" << l << ",attn_to_0_l" << l;
  o << "\n";
  for (const AblationRow& r : rows) {
    const ProbeRecord& p = r.probe;
    double active = NAN;
    if (L > 0)
      for (const HeadAttention& h : p.layers[L > 1 ? 1 : 0].heads)
        if (std::isfinite(h.attn_to_0_active))
          active = std::isfinite(active) ? std::max(active, h.attn_to_0_active) : h.attn_to_0_active;
    o << r.component << ',' << r.mode << ',' << cell(p.loss) << ',' << cell(p.accuracy) << ',' << cell(p.first_accuracy)
      << ',' << cell(active);
    for (const LayerProbe& lp : p.layers)
      o << ',' << cell(lp.state.p0_norm_ratio) << ',' << cell(lp.state.p0_cos) << ',' << cell(lp.sink.sink_rate) << ','
        << cell(lp.sink.attn_to_0);
    o << "\n";
  }
  return o.str();
}

}  // namespace p0sim::sim
