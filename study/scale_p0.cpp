#include "study/scale_p0.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/format.hpp"
#include "common/stats.hpp"
#include "sim/probe_trace.hpp"
#include "sim/probes.hpp"

namespace p0sim::study {

std::vector<ScaleP0Row> scale_p0(const sim::ModelConfig& model, std::span<const float> params,
                                 const std::vector<std::int32_t>& rows, const std::vector<sim::Kind>& kinds,
                                 const ScaleP0Options& o) {
  sim::validate(model);
  const int T = model.seq_len, P = model.positions(), H = model.heads, L = model.layers;
  const std::size_t row_len = static_cast<std::size_t>(T) + 1;
  const int N = static_cast<int>(rows.size() / row_len);
  if (N < 1 || rows.size() != N * row_len || kinds.size() != static_cast<std::size_t>(N) * T)
    throw std::invalid_argument("scale_p0: rows must be (N,T+1) and kinds (N,T) with N >= 1");
  for (int l : o.layers)
    if (l < 0 || l >= L) throw std::out_of_range("scale_p0: layer index " + std::to_string(l));
  for (double f : o.factors)
    if (!(std::isfinite(f) && f > 0.0)) throw std::invalid_argument("scale_p0: factor must be finite and > 0");
  if (!(std::isfinite(o.fd_step) && o.fd_step > 0.0)) throw std::invalid_argument("scale_p0: fd_step must be > 0");

  sim::Model<double> m(model, N);
  if (static_cast<Eigen::Index>(params.size()) != m.params().size())
    throw std::invalid_argument("scale_p0: " + std::to_string(params.size()) + " parameters, the model has " +
                                std::to_string(m.params().size()));
  m.params() = Eigen::Map<const Eigen::VectorXf>(params.data(), m.params().size()).cast<double>();
  // As the probe reads them: sigmoid attention through the row-normalised |A| proxy.
  const bool proxy = model.attn == sim::Attn::sigmoid;
  auto loss_at = [&](int l, double f) {
    m.set_position0_scale(l, f);
    return static_cast<double>(m.forward(rows.data(), N));
  };
  std::vector<ScaleP0Row> out;
  for (int l : o.layers)
    for (double f : o.factors) {
      ScaleP0Row r;
      r.layer = l;
      r.factor = f;
      const double h = o.fd_step;
      r.dloss_dlogfactor = (loss_at(l, f * std::exp(h)) - loss_at(l, f * std::exp(-h))) / (2.0 * h);
      r.loss = loss_at(l, f);  // last, so the activations read below are those at f
      sim::ProbeRecord scored;
      sim::score_accuracy(scored, m.logits(), rows.data(), kinds.data(), N, model);
      r.accuracy = scored.accuracy;
      r.attn_to_0.assign(static_cast<std::size_t>(L), kNaN);
      r.sink_rate.assign(static_cast<std::size_t>(L), kNaN);
      for (int k = l + 1; k < L; ++k) {
        // trace.csv's attn_to_0 and sink_rate of block k, from the same functions the probe calls
        const sim::SinkMetrics s = sim::sink_metrics(
            sim::head_attention(m.attention(k), N, H, P, proxy, nullptr, o.sink_eps), o.sink_eps);  // (N,H,P,P)
        r.attn_to_0[static_cast<std::size_t>(k)] = s.attn_to_0;
        r.sink_rate[static_cast<std::size_t>(k)] = s.sink_rate;
      }
      out.push_back(std::move(r));
    }
  m.clear_position0_scale();
  return out;
}

std::string scale_p0_csv(const std::vector<ScaleP0Row>& rows) {
  std::ostringstream o;
  const int L = rows.empty() ? 0 : static_cast<int>(rows.front().attn_to_0.size());
  int first = L;  // the first block after the smallest scaled layer
  for (const ScaleP0Row& r : rows) first = std::min(first, r.layer + 1);
  o << "layer,factor,loss,dloss_dlogfactor";
  for (int k = first; k < L; ++k) o << ",attn_to_0_l" << k;
  for (int k = first; k < L; ++k) o << ",sink_rate_l" << k;
  o << ",accuracy\n";
  for (const ScaleP0Row& r : rows) {
    o << r.layer << ',' << fmt_shortest(r.factor) << ',' << csv_number(r.loss) << ',' << csv_number(r.dloss_dlogfactor);
    for (int k = first; k < L; ++k) o << ',' << csv_number(r.attn_to_0[static_cast<std::size_t>(k)]);
    for (int k = first; k < L; ++k) o << ',' << csv_number(r.sink_rate[static_cast<std::size_t>(k)]);
    o << ',' << csv_number(r.accuracy) << '\n';
  }
  return o.str();
}

}  // namespace p0sim::study
