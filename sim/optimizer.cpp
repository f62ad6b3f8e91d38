#include "sim/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/gemm.hpp"

namespace p0sim::sim {

using Eigen::Index;

bool decays(const TensorInfo& t, DecayGroup group) {
  switch (group) {
    case DecayGroup::matrices:
      return t.decay;
    case DecayGroup::no_embeddings:
      return t.decay && t.name != "tok_emb" && t.name != "pos_emb";
    default:
      return true;
  }
}

template <typename Scalar>
Optimizer<Scalar>::Optimizer(const std::vector<TensorInfo>& layout, const OptimizerConfig& config) : config_(config) {
  Index n = 0;
  for (const auto& t : layout) n = std::max(n, t.offset + t.size);
  decay_mask_ = Vector::Zero(n);
  for (const auto& t : layout)
    if (decays(t, config.decay_group)) decay_mask_.segment(t.offset, t.size).setOnes();
  m_ = Vector::Zero(n);
  v_ = Vector::Zero(n);
}

namespace {

// Applies update(p, g, m, v, mask) over the flat buffers a register chunk at a time: one pass,
// the same bits as whole-buffer expressions (every operation is elementwise and correctly rounded).
template <typename Scalar, typename Update>
void chunked(Scalar* p, const Scalar* g, Scalar* m, Scalar* v, const Scalar* mask, Index n, Update update) {
  using Chunk = Eigen::Array<Scalar, 16, 1>;
  using Part = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  Index i = 0;
  for (; i + 16 <= n; i += 16)
    update(Eigen::Map<Chunk>(p + i), Eigen::Map<const Chunk>(g + i), Eigen::Map<Chunk>(m + i), Eigen::Map<Chunk>(v + i),
           Eigen::Map<const Chunk>(mask + i));
  if (i < n)
    update(Eigen::Map<Part>(p + i, n - i), Eigen::Map<const Part>(g + i, n - i), Eigen::Map<Part>(m + i, n - i),
           Eigen::Map<Part>(v + i, n - i), Eigen::Map<const Part>(mask + i, n - i));
}

}  // namespace

template <typename Scalar>
void Optimizer<Scalar>::step(Eigen::Ref<Vector> params, Eigen::Ref<const Vector> grads, double lr) {
  if (params.size() != m_.size() || grads.size() != m_.size())
    throw std::invalid_argument("Optimizer::step: buffer size does not match the layout");
  ++steps_;
  if (config_.kind == OptimizerKind::sgd)
    sgd_step(params.data(), grads.data(), lr);
  else
    adamw_step(params.data(), grads.data(), lr);
}

template <typename Scalar>
void Optimizer<Scalar>::adamw_step(Scalar* p, const Scalar* g, double lr) {
  const double t = static_cast<double>(steps_);
  const double bc1 = 1.0 - std::pow(config_.beta1, t);
  const double bc2 = 1.0 - std::pow(config_.beta2, t);
  // p *= 1 - lr*wd; m.lerp_(g, 1-b1); v = b2 v + (1-b2) g^2; p -= (lr/bc1) * m / (sqrt(v)/sqrt(bc2) + eps)
  const Scalar decay = static_cast<Scalar>(lr * config_.weight_decay);
  const Scalar one_m_b1 = static_cast<Scalar>(1.0 - config_.beta1);
  const Scalar b2 = static_cast<Scalar>(config_.beta2), one_m_b2 = static_cast<Scalar>(1.0 - config_.beta2);
  const Scalar step_size = static_cast<Scalar>(lr / bc1);
  const Scalar bc2_sqrt = static_cast<Scalar>(std::sqrt(bc2));
  const Scalar eps = static_cast<Scalar>(config_.eps);
  // ieee_sqrt and the packet division are correctly rounded, so the bits are the same on any CPU
  chunked(p, g, m_.data(), v_.data(), decay_mask_.data(), m_.size(), [&](auto p, auto g, auto m, auto v, auto mask) {
    m += one_m_b1 * (g - m);
    v = b2 * v + one_m_b2 * g.square();
    p = p * (Scalar(1) - decay * mask) - step_size * m / (ieee_sqrt(v) / bc2_sqrt + eps);
  });
}

template <typename Scalar>
void Optimizer<Scalar>::sgd_step(Scalar* p, const Scalar* g, double lr) {
  // d = g + wd*p; buf = momentum*buf + d; p -= lr*buf (torch's first step sets buf = d: the same as
  // starting from zero)
  const Scalar wd = static_cast<Scalar>(config_.weight_decay);
  const Scalar momentum = static_cast<Scalar>(config_.momentum);
  const Scalar rate = static_cast<Scalar>(lr);
  chunked(p, g, m_.data(), v_.data(), decay_mask_.data(), m_.size(), [&](auto p, auto g, auto buf, auto, auto mask) {
    buf = momentum * buf + (g + wd * mask * p);
    p -= rate * buf;
  });
}

template <typename Scalar>
std::int64_t Optimizer<Scalar>::steps() const {
  return steps_;
}
template <typename Scalar>
Eigen::Map<typename Optimizer<Scalar>::Vector> Optimizer<Scalar>::first_moment() {
  return {m_.data(), m_.size()};
}
template <typename Scalar>
Eigen::Map<typename Optimizer<Scalar>::Vector> Optimizer<Scalar>::second_moment() {
  return {v_.data(), v_.size()};
}
template <typename Scalar>
void Optimizer<Scalar>::set_steps(std::int64_t steps) {
  steps_ = steps;
}

template class Optimizer<float>;
template class Optimizer<double>;

}  // namespace p0sim::sim
