#include "study/warm_start.hpp"

#include <algorithm>
#include <cmath>

#include "common/errors.hpp"
#include "common/rng.hpp"

namespace p0sim::study {

CircuitPoint warm_start_point(const sim::ModelConfig& m, const CircuitPoint& shape) {
  auto refuse = [](const std::string& why) { throw UsageError("--warm-start", "circuit needs " + why); };
  if (m.layers != 2) refuse("--layers 2");
  if (m.norm != sim::Norm::rms) refuse("--norm rms");
  if (m.act != sim::Act::gelu) refuse("--act gelu");
  if (m.attn != sim::Attn::softmax) refuse("--attn softmax");
  if (m.pos != sim::PosEnc::none) refuse("--pos none");
  if (m.bos) refuse("no --bos");
  if (m.vocab > m.d_model - 2) refuse("--vocab <= --d-model - 2 (a direction orthogonal to every embedding)");
  CircuitPoint p = shape;
  p.d = m.d_model;
  p.T = m.seq_len;
  p.vocab = m.vocab;
  p.heads = m.heads;
  p.mask = m.mask == sim::Mask::causal ? sim::Mask::causal : sim::Mask::bidirectional;
  validate(p);
  return p;
}

void warm_start_from_circuit(sim::Model<float>& model, const CircuitPoint& p, std::uint64_t seed, double noise) {
  sim::Model<double> wired(circuit_model_config(p), 1);
  wire_circuit(wired, p, seed);
  auto dst = model.params();
  dst.setZero();
  for (const sim::TensorInfo& t : model.layout()) {
    const sim::TensorInfo& s = wired.tensor(t.name);  // same names: only d_ff may differ
    const double* from = wired.params().data() + s.offset;
    float* to = dst.data() + t.offset;
    if (s.shape == t.shape) {
      for (Eigen::Index i = 0; i < t.size; ++i) to[i] = static_cast<float>(from[i]);
    } else if (t.name.ends_with("mlp.w1")) {  // (F,C) <- (1,C): row 0
      for (Eigen::Index i = 0; i < s.size; ++i) to[i] = static_cast<float>(from[i]);
    } else if (t.name.ends_with("mlp.w2")) {  // (C,F) <- (C,1): column 0
      const Eigen::Index C = t.shape[0], F = t.shape[1];
      for (Eigen::Index r = 0; r < C; ++r) to[r * F] = static_cast<float>(from[r]);
    } else {
      throw std::logic_error("warm start: tensor " + t.name + " has an unexpected shape");
    }
  }
  PhiloxStream rng(seed, 7);  // its own stream: the noise does not reuse the embedding draws
  for (Eigen::Index i = 0; i < dst.size(); ++i) dst[i] += static_cast<float>(noise * rng.normal());
}

nlohmann::json warm_start_report(const std::vector<sim::ProbeRecord>& trace) {
  nlohmann::json j;
  if (trace.empty()) return j;
  auto max_ratio = [](const sim::ProbeRecord& r) {
    double m = 0;
    for (const auto& l : r.layers) m = std::max(m, l.state.p0_norm_ratio);
    return m;
  };
  const sim::ProbeRecord &first = trace.front(), &last = trace.back();
  const bool held = first.high_norm && first.sink, holds = last.high_norm && last.sink;
  const double r0 = max_ratio(first), r1 = max_ratio(last);
  std::string outcome = !held ? "not-held" : !holds ? "dismantled" : r1 > 1.25 * r0 ? "sharpened" : "kept";
  j["outcome"] = outcome;
  j["initial"] = {{"max_p0_norm_ratio", r0}, {"high_norm", first.high_norm}, {"sink", first.sink}};
  j["final"] = {{"max_p0_norm_ratio", r1}, {"high_norm", last.high_norm}, {"sink", last.sink}, {"step", last.step}};
  return j;
}

std::function<void(sim::Model<float>&)> warm_start_initialiser(const RunSpec& spec) {
  if (spec.warm_start != WarmStart::circuit) return {};
  const sim::TrainConfig& c = spec.train;
  if (c.probe.every <= 0) throw UsageError("--warm-start", "circuit needs probes (--probe-every > 0) to report on it");
  return [point = warm_start_point(c.model, CircuitPoint{}), seed = c.seed,
          noise = spec.warm_start_noise](sim::Model<float>& m) { warm_start_from_circuit(m, point, seed, noise); };
}

}  // namespace p0sim::study
