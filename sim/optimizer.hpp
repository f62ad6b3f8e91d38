#pragma once
// The optimisers over the flat parameter buffer, each exactly as PyTorch's (single-tensor path):
//   adamw  torch.optim.AdamW: bias-corrected moments, decoupled weight decay (p -= lr*wd*p first);
//   sgd    torch.optim.SGD with momentum, dampening 0: d = g + wd*p (coupled L2 decay);
//          buf = momentum*buf + d (buf starts at d, as at zero); p -= lr*buf.
// Which tensors decay is a parameter group (DecayGroup), chosen by name from the layout.
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "common/enum_names.hpp"
#include "sim/model.hpp"

namespace p0sim::sim {

enum class OptimizerKind { adamw, sgd, count };
constexpr std::array<std::string_view, 2> enum_names_of(OptimizerKind) { return {"adamw", "sgd"}; }

// The tensors weight decay applies to: every matrix (embeddings and lm_head included, PyTorch's
// "decay the 2-D tensors"); the matrices except the token and position embeddings (the usual "no
// decay on norms and embeddings"); or every parameter (optimizer(model.parameters()), as Guo et
// al.'s code does).
enum class DecayGroup { matrices, no_embeddings, all, count };
constexpr std::array<std::string_view, 3> enum_names_of(DecayGroup) { return {"matrices", "no-embeddings", "all"}; }
bool decays(const TensorInfo& t, DecayGroup group);

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::adamw;
  double beta1 = 0.9;  // adamw
  double beta2 = 0.95;
  double eps = 1e-8;
  double momentum = 0.9;  // sgd
  double weight_decay = 0.1;
  DecayGroup decay_group = DecayGroup::matrices;
};

template <typename Scalar>
class Optimizer {
 public:
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  Optimizer(const std::vector<TensorInfo>& layout, const OptimizerConfig& config);
  // One update with learning rate lr (schedules live in the training loop). Allocation-free.
  void step(Eigen::Ref<Vector> params, Eigen::Ref<const Vector> grads, double lr);
  std::int64_t steps() const;
  // adamw: the first and second moments; sgd: the momentum buffer and zeros. Checkpoints keep both.
  Eigen::Map<Vector> first_moment();
  Eigen::Map<Vector> second_moment();
  void set_steps(std::int64_t steps);  // for checkpoints

 private:
  void adamw_step(Scalar* p, const Scalar* g, double lr);
  void sgd_step(Scalar* p, const Scalar* g, double lr);
  OptimizerConfig config_;
  Vector decay_mask_;  // 1 where decay applies
  Vector m_, v_;
  std::int64_t steps_ = 0;
};

extern template class Optimizer<float>;
extern template class Optimizer<double>;

}  // namespace p0sim::sim
