// The optimisers against steps computed by hand from the textbook forms (PyTorch docs).
// AdamW (Loshchilov & Hutter): p <- p (1 - lr wd [decay tensors only]); m <- b1 m + (1-b1) g;
// v <- b2 v + (1-b2) g^2; p <- p - lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps).
// SGD with momentum mu (dampening 0): d <- g + wd p [decay tensors only]; b <- mu b + d (b = d at
// step 1); p <- p - lr b.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/model.hpp"
#include "sim/optimizer.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_optimizer_steps_test {

using namespace p0sim::sim;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("AdamW matches hand-computed steps, decaying matrices only", "[sim][adamw]") {
  // one "matrix" of 2 entries (decay) and one "gain" of 1 entry (no decay)
  std::vector<TensorInfo> layout = {{"w", {1, 2}, 0, 2, true}, {"n.weight", {1}, 2, 1, false}};
  OptimizerConfig cfg;
  cfg.beta1 = 0.9;
  cfg.beta2 = 0.99;
  cfg.eps = 1e-8;
  cfg.weight_decay = 0.5;
  Optimizer<double> opt(layout, cfg);
  Eigen::VectorXd p(3), g(3);
  p << 1.0, -2.0, 0.5;
  const double lr = 0.1;
  const double grads[3][3] = {{0.3, -0.1, 2.0}, {-0.2, 0.4, 1.0}, {0.0, 0.0, -3.0}};

  // step 1 by hand: m = 0.1 g, v = 0.01 g^2, m_hat = g, v_hat = g^2, so the step is lr * sign(g)
  // (up to eps / |g| ~ 1e-7 relative)
  g << grads[0][0], grads[0][1], grads[0][2];
  opt.step(p, g, lr);
  CHECK_THAT(p[0], WithinAbs(1.0 * (1 - 0.05) - 0.1, 1e-8));
  CHECK_THAT(p[1], WithinAbs(-2.0 * (1 - 0.05) + 0.1, 1e-8));
  CHECK_THAT(p[2], WithinAbs(0.5 - 0.1, 1e-8));  // no decay on the gain

  // steps 1 to 3 against the textbook recursion (a fresh optimiser, same gradients)
  Optimizer<double> fresh(layout, cfg);
  Eigen::VectorXd q(3);
  q << 1.0, -2.0, 0.5;
  double ep[3] = {1.0, -2.0, 0.5}, m[3] = {0, 0, 0}, v[3] = {0, 0, 0};
  for (int t = 1; t <= 3; ++t) {
    const auto& gr = grads[t - 1];
    g << gr[0], gr[1], gr[2];
    fresh.step(q, g, lr);
    for (int i = 0; i < 3; ++i) {
      const bool decay = i < 2;
      if (decay) ep[i] *= 1 - lr * 0.5;
      m[i] = 0.9 * m[i] + 0.1 * gr[i];
      v[i] = 0.99 * v[i] + 0.01 * gr[i] * gr[i];
      const double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.99, t));
      ep[i] -= lr * mh / (std::sqrt(vh) + 1e-8);
    }
    // the two forms differ only in rounding (lerp vs. weighted sum, sqrt(v)/sqrt(bc2) vs. sqrt(v/bc2))
    for (int i = 0; i < 3; ++i) CHECK_THAT(q[i], WithinRel(ep[i], 1e-12));
  }
  opt = fresh;
  CHECK(opt.steps() == 3);
  CHECK_THAT(opt.first_moment()[2], WithinRel(m[2], 1e-12));
  CHECK_THAT(opt.second_moment()[0], WithinRel(v[0], 1e-12));
}

TEST_CASE("AdamW with zero gradient only decays the decay tensors", "[sim][adamw]") {
  std::vector<TensorInfo> layout = {{"w", {2}, 0, 2, true}, {"b", {1}, 2, 1, false}};
  Optimizer<float> opt(layout, OptimizerConfig{});
  Eigen::VectorXf p(3), g = Eigen::VectorXf::Zero(3);
  p << 1.f, 2.f, 3.f;
  opt.step(p, g, 0.01);
  CHECK_THAT(p[0], WithinRel(1.f * (1 - 0.01f * 0.1f), 1e-6f));
  CHECK_THAT(p[1], WithinRel(2.f * (1 - 0.01f * 0.1f), 1e-6f));
  CHECK(p[2] == 3.f);
}

TEST_CASE("SGD with momentum matches hand-computed steps, decaying matrices only", "[sim][sgd]") {
  std::vector<TensorInfo> layout = {{"w", {1, 2}, 0, 2, true}, {"n.weight", {1}, 2, 1, false}};
  OptimizerConfig cfg;
  cfg.kind = OptimizerKind::sgd;
  cfg.momentum = 0.9;
  cfg.weight_decay = 0.01;
  Optimizer<double> opt(layout, cfg);
  Eigen::VectorXd p(3), g(3);
  p << 1.0, -2.0, 0.5;
  const double lr = 0.03;
  const double grads[3][3] = {{0.3, -0.1, 2.0}, {-0.2, 0.4, 1.0}, {0.0, 0.0, -3.0}};
  double ep[3] = {1.0, -2.0, 0.5}, buf[3] = {0, 0, 0};
  for (int t = 1; t <= 3; ++t) {
    const auto& gr = grads[t - 1];
    g << gr[0], gr[1], gr[2];
    opt.step(p, g, lr);
    for (int i = 0; i < 3; ++i) {
      const double d = gr[i] + (i < 2 ? 0.01 * ep[i] : 0.0);
      buf[i] = t == 1 ? d : 0.9 * buf[i] + d;
      ep[i] -= lr * buf[i];
    }
    for (int i = 0; i < 3; ++i) CHECK_THAT(p[i], WithinRel(ep[i], 1e-14));
  }
  CHECK(opt.steps() == 3);
  CHECK_THAT(opt.first_moment()[1], WithinRel(buf[1], 1e-14));  // the momentum buffer
  CHECK(opt.second_moment().isZero());
}

TEST_CASE("each weight-decay group decays exactly its tensors", "[sim][adamw][sgd]") {
  const auto kind = GENERATE(OptimizerKind::adamw, OptimizerKind::sgd);
  const auto group = GENERATE(DecayGroup::matrices, DecayGroup::no_embeddings, DecayGroup::all);
  const std::string kind_name(p0sim::enum_name(kind)), group_name(p0sim::enum_name(group));
  CAPTURE(kind_name, group_name);
  // the names parameter_layout gives: embeddings, a block matrix, a norm gain, lm_head
  std::vector<TensorInfo> layout = {{"tok_emb", {1}, 0, 1, true},
                                    {"pos_emb", {1}, 1, 1, true},
                                    {"blocks.0.attn.wq", {1}, 2, 1, true},
                                    {"blocks.0.norm1.weight", {1}, 3, 1, false},
                                    {"lm_head", {1}, 4, 1, true}};
  OptimizerConfig cfg;
  cfg.kind = kind;
  cfg.weight_decay = 0.5;
  cfg.decay_group = group;
  Optimizer<double> opt(layout, cfg);
  Eigen::VectorXd p = Eigen::VectorXd::Ones(5), g = Eigen::VectorXd::Zero(5);
  opt.step(p, g, 0.1);                                             // a zero gradient: only decay moves a parameter
  const bool expected[3][5] = {{true, true, true, false, true},    // matrices
                               {false, false, true, false, true},  // no-embeddings
                               {true, true, true, true, true}};    // all
  for (int i = 0; i < 5; ++i) {
    CAPTURE(layout[static_cast<std::size_t>(i)].name);
    CHECK((p[i] < 1.0) == expected[static_cast<int>(group)][i]);
  }
}

}  // namespace sim_optimizer_steps_test
