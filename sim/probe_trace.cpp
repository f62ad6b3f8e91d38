#include "sim/probe_trace.hpp"

#include "sim/probe_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"
#include "common/json_number.hpp"
#include "common/stats.hpp"

namespace p0sim::sim {
namespace {

nlohmann::json step_or_null(const std::optional<int>& s) { return s ? nlohmann::json(*s) : nlohmann::json(nullptr); }

}  // namespace

LayerProbe probe_layer(const Model<float>& model, int l, const std::vector<char>* active, double sink_eps) {
  const ModelConfig& mc = model.config();
  const int N = model.last_batch(), P = mc.positions(), C = mc.d_model, H = mc.heads;
  // Sigmoid attention is unnormalised: its metrics use the row-normalised |A| proxy (DESIGN.md 5).
  // ReLU attention is read as it is (its rows already divided by the keys they see), as Guo et al.
  // read it: the proxy would make a row whose one positive score is tiny a perfect sink.
  const bool proxy = mc.attn == Attn::sigmoid;
  LayerProbe lp;
  lp.state = state_metrics(model.hidden(l + 1), N, P, C);                           // (N,P,C)
  lp.mid = state_metrics(model.hidden_mid(l), N, P, C);                             // (N,P,C)
  lp.heads = head_attention(model.attention(l), N, H, P, proxy, active, sink_eps);  // (N,H,P,P)
  lp.sink = sink_metrics(lp.heads, sink_eps);
  // The value drain: what each head writes when it attends to position 0 alone, |W_o,h v_0,h|.
  const auto wo = model.params().segment(model.tensor("blocks." + std::to_string(l) + ".attn.wo").offset, C * C);
  const int D = C / H;
  // prefix-bidirectional: position 0 is another vector in each pass, so average over the passes.
  const int passes = mc.mask == Mask::prefix_bidirectional ? P : 1;
  // wo is (out, in) row-major: head h's inputs are columns h*D..h*D+D-1
  const Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> w(wo.data(), C, C);
  for (int h = 0; h < H; ++h) {
    double total = 0.0;
    for (int n = 0; n < N; ++n)
      for (int pass = 0; pass < passes; ++pass) {
        const Eigen::Map<const Eigen::VectorXf> v(model.value_at_position0(l, n, pass) + h * D, D);
        total += static_cast<double>((w.middleCols(h * D, D) * v).norm());
      }
    lp.heads[static_cast<std::size_t>(h)].value_out_norm_0 = total / (static_cast<double>(N) * passes);
  }
  return lp;
}

Prober::Prober(const ModelConfig& model, const DataGenerator& data, const ProbeConfig& config)
    : config_(config), task_(data.config().task), model_(model, config.batch) {
  validate(config);
  const int N = config.batch, T = model.seq_len, P = model.positions(), bos = model.bos ? 1 : 0;
  rows_.resize(static_cast<std::size_t>(N) * data.row_length());
  kinds_.resize(static_cast<std::size_t>(N) * T);
  // Stream 1: independent of the training batches (stream 0), identical at every probe.
  data.fill(1, 0, N, rows_.data(), kinds_.data());
  active_.assign(static_cast<std::size_t>(N) * P, 0);
  for (int n = 0; n < N; ++n)
    for (int t = 0; t < T; ++t)
      // Active queries for the attention metrics: triggers (and lookup's queries in pure lookup);
      // the mixture's lookup queries are scored apart.
      active_[static_cast<std::size_t>(n) * P + t + bos] =
          kinds_[static_cast<std::size_t>(n) * T + t] == Kind::active ||
          kinds_[static_cast<std::size_t>(n) * T + t] == Kind::first;
}

template <typename Scalar>
void score_accuracy(ProbeRecord& r, const Scalar* logits, const std::int32_t* rows, const Kind* kinds, int N,
                    const ModelConfig& mc) {
  const int T = mc.seq_len, P = mc.positions(), V = mc.vocab, bos = mc.bos ? 1 : 0, row_len = T + 1;
  long hit = 0, first_hit = 0, query_hit = 0;
  r.scored = r.first_scored = r.query_scored = 0;
  for (int n = 0; n < N; ++n) {
    for (int t = 0; t < T; ++t) {
      const Kind k = kinds[static_cast<std::size_t>(n) * T + t];
      if (k == Kind::none) continue;
      const Scalar* z = logits + (static_cast<long>(n) * P + t + bos) * V;  // (V)
      const bool ok = std::max_element(z, z + V) - z == rows[static_cast<std::size_t>(n) * row_len + t + 1];
      if (k == Kind::query) {
        ++r.query_scored;
        query_hit += ok;
        continue;
      }
      ++r.scored;
      hit += ok;
      if (k == Kind::first) {
        ++r.first_scored;
        first_hit += ok;
      }
    }
  }
  r.accuracy = r.scored > 0 ? static_cast<double>(hit) / static_cast<double>(r.scored) : kNaN;
  r.first_accuracy = r.first_scored > 0 ? static_cast<double>(first_hit) / static_cast<double>(r.first_scored) : kNaN;
  r.query_accuracy = r.query_scored > 0 ? static_cast<double>(query_hit) / static_cast<double>(r.query_scored) : kNaN;
}
template void score_accuracy<float>(ProbeRecord&, const float*, const std::int32_t*, const Kind*, int,
                                    const ModelConfig&);
template void score_accuracy<double>(ProbeRecord&, const double*, const std::int32_t*, const Kind*, int,
                                     const ModelConfig&);

ProbeRecord Prober::probe(const Model<float>& trained, int step) {
  const ModelConfig& mc = model_.config();
  const int N = config_.batch, L = mc.layers;
  model_.params() = trained.params();
  ProbeRecord r;
  r.step = step;
  r.loss = static_cast<double>(model_.forward(rows_.data(), N));
  score_accuracy(r, model_.logits(), rows_.data(), kinds_.data(), N, mc);
  r.layers.resize(static_cast<std::size_t>(L));
  for (int l = 0; l < L; ++l)
    r.layers[static_cast<std::size_t>(l)] = probe_layer(model_, l, r.scored > 0 ? &active_ : nullptr, config_.sink_eps);
  return r;
}

Emergence analyse_trace(std::vector<ProbeRecord>& trace, const ProbeConfig& c, Task task) {
  for (ProbeRecord& r : trace) {
    const int L = static_cast<int>(r.layers.size());
    double best_active = -1.0;
    int first_high = -1;
    bool spread = false, sink = false, p1_high = false;
    for (int l = 0; l < L; ++l) {
      const LayerProbe& lp = r.layers[static_cast<std::size_t>(l)];
      for (const HeadAttention& h : lp.heads)
        if (std::isfinite(h.attn_to_0_active)) best_active = std::max(best_active, h.attn_to_0_active);
      const bool high = lp.state.p0_norm_ratio >= c.emerge_ratio && lp.state.p0_cos >= c.emerge_cos;
      if (high) {
        if (first_high < 0) first_high = l;
        if (lp.state.p1_norm_ratio >= c.emerge_ratio) p1_high = true;
      }
      if (l >= first_sink_layer(L) && lp.sink.sink_rate > 0.0) {
        sink = true;
        // Spread: among the sinking heads, key 1 takes at least half of what key 0 takes.
        for (const HeadAttention& h : lp.heads)
          if (h.attn_to_0 > c.sink_eps && h.attn_to_1 >= 0.5 * h.attn_to_0) spread = true;
      }
    }
    r.identification = recalls_position0(task) && std::isfinite(r.accuracy) && r.accuracy >= c.emerge_accuracy &&
                       best_active >= c.emerge_attn;
    r.high_norm = first_high >= 0;
    r.sink = sink;
    if (sink && (spread || p1_high))
      r.stage = "transitional";
    else if (sink && first_high >= 0 && first_high <= 1)
      r.stage = "final";
    else if (first_high >= 0)
      r.stage = "early";
    else
      r.stage = "none";
  }
  // First step from which a claim holds at every later probe: walk back from the last probe.
  auto emergence = [&](bool ProbeRecord::*claim) -> std::optional<int> {
    std::optional<int> step;
    for (auto it = trace.rbegin(); it != trace.rend() && (*it).*claim; ++it) step = it->step;
    return step;
  };
  return {emergence(&ProbeRecord::identification), emergence(&ProbeRecord::high_norm), emergence(&ProbeRecord::sink)};
}

void write_trace_csv(const std::filesystem::path& path, const std::vector<ProbeRecord>& trace) {
  AtomicFile f(path);
  auto& o = f.stream();
  // Per (step, layer): the state after block `layer`, the same after its attention sublayer
  // (mid_*), the layer's head summary, and the probe batch's loss and task accuracy (repeated on
  // each layer's row; empty when the task scores nothing).
  const auto& metrics = layer_metrics();
  o << "step,layer";
  for (const LayerMetric& m : metrics)
    if (m.mid) o << ',' << m.name;
  for (const LayerMetric& m : metrics)
    if (m.mid) o << ",mid_" << m.name;
  for (const LayerMetric& m : metrics)
    if (!m.mid) o << ',' << m.name;
  o << ",loss,accuracy,first_accuracy,stage\n";
  for (const ProbeRecord& r : trace)
    for (std::size_t l = 0; l < r.layers.size(); ++l) {
      const LayerProbe& lp = r.layers[l];
      o << r.step << ',' << l;
      for (const LayerMetric& m : metrics)
        if (m.mid) o << ',' << csv_number(m.value(lp));
      for (const LayerMetric& m : metrics)
        if (m.mid) o << ',' << csv_number(m.mid(lp));
      for (const LayerMetric& m : metrics)
        if (!m.mid) o << ',' << csv_number(m.value(lp));
      o << ',' << csv_number(r.loss) << ',' << csv_number(r.accuracy) << ',' << csv_number(r.first_accuracy) << ','
        << r.stage << '\n';
    }
  f.commit();
}

void write_heads_csv(const std::filesystem::path& path, const std::vector<ProbeRecord>& trace) {
  AtomicFile f(path);
  auto& o = f.stream();
  o << "step,layer,head";
  for (const HeadMetric& m : kHeadMetrics) o << ',' << m.name;
  o << '\n';
  for (const ProbeRecord& r : trace)
    for (std::size_t l = 0; l < r.layers.size(); ++l)
      for (std::size_t h = 0; h < r.layers[l].heads.size(); ++h) {
        o << r.step << ',' << l << ',' << h;
        for (const HeadMetric& m : kHeadMetrics) o << ',' << csv_number(r.layers[l].heads[h].*m.field);
        o << '\n';
      }
  f.commit();
}

nlohmann::json probe_summary(const std::vector<ProbeRecord>& trace, const Emergence& e, const ProbeConfig& c,
                             bool bos) {
  nlohmann::json j;
  j["position_0"] = bos ? "the BOS position (the first position the model sees)" : "the first token";
  j["every"] = c.every;
  j["batch"] = c.batch;
  j["thresholds"] = {{"emerge_attn", c.emerge_attn},
                     {"emerge_accuracy", c.emerge_accuracy},
                     {"emerge_ratio", c.emerge_ratio},
                     {"emerge_cos", c.emerge_cos},
                     {"sink_eps", c.sink_eps}};
  j["emergence"] = {{"identification", step_or_null(e.identification)},
                    {"high_norm", step_or_null(e.high_norm)},
                    {"sink", step_or_null(e.sink)}};
  nlohmann::json history = nlohmann::json::array();
  for (const ProbeRecord& r : trace) history.push_back({{"step", r.step}, {"stage", r.stage}});
  j["stage_history"] = history;
  if (trace.empty()) return j;
  const ProbeRecord& last = trace.back();
  j["final_step"] = last.step;
  j["final_stage"] = last.stage;
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerProbe& lp : last.layers) {
    nlohmann::json heads = nlohmann::json::array();
    for (const HeadAttention& h : lp.heads) {
      nlohmann::json head = nlohmann::json::object();
      for (const HeadMetric& m : kHeadMetrics) head[m.name] = json_number(h.*m.field);
      heads.push_back(head);
    }
    nlohmann::json layer{{"heads", heads}};
    for (const LayerMetric& m : layer_metrics()) {
      layer[m.name] = json_number(m.value(lp));
      if (m.mid_in_summary) layer["mid_" + m.name] = json_number(m.mid(lp));
    }
    layers.push_back(layer);
  }
  j["final_layers"] = layers;
  j["final_loss"] = json_number(last.loss);
  return j;
}

}  // namespace p0sim::sim
