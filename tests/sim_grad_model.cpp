// The whole model's gradient against central finite differences in double, for every combination
// of mask x attn x pos x bos x norm x act on a small grid of shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/model.hpp"
#include "tests/sim_grad_check.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_grad_model_test {

using namespace p0sim::sim;
using p0sim::PhiloxStream;

namespace {

// Parameters far from the 0.02 init, so attention is not uniform and every path carries a
// gradient of order 1e-2 or more (the finite differences then resolve it to ~1e-9).
void randomise(Model<double>& m, std::uint64_t seed) {
  PhiloxStream rng(seed, 99);
  for (const auto& t : m.layout()) {
    double* w = m.params().data() + t.offset;
    const bool gain = t.name.size() > 7 && t.name.compare(t.name.size() - 7, 7, ".weight") == 0;
    p0sim::test::fill_normal(w, t.size, gain ? 0.2 : 0.4, rng, gain ? 1.0 : 0.0);
  }
}

// Largest per-tensor error ||g - g_fd|| / ||g + g_fd|| over up to 20 sampled entries per tensor.
double model_grad_error(const ModelConfig& cfg, int B, std::uint64_t seed) {
  Model<double> m(cfg, B);
  randomise(m, seed);
  PhiloxStream rng(seed, 7);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B * (cfg.seq_len + 1)));
  for (auto& r : rows) r = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(cfg.vocab)));
  m.forward(rows.data(), B);
  m.zero_grad();
  m.backward();
  const Eigen::VectorXd g = m.grads();
  auto loss = [&] { return static_cast<double>(m.forward(rows.data(), B)); };
  double worst = 0;
  for (const auto& t : m.layout()) {
    auto idx = p0sim::test::sample_indices(t.size, 20, rng);
    for (auto& i : idx) i += t.offset;
    const double e = p0sim::test::fd_error(m.params().data(), g.data(), idx, loss);
    UNSCOPED_INFO(t.name << " error " << e);
    worst = std::max(worst, e);
  }
  return worst;
}

}  // namespace

TEST_CASE("model gradient matches finite differences for every variant", "[sim][grad][model]") {
  const auto mask = GENERATE(Mask::causal, Mask::bidirectional, Mask::prefix_bidirectional);
  const auto attn = GENERATE(Attn::softmax, Attn::softmax1, Attn::sigmoid, Attn::relu);
  const auto pos = GENERATE(PosEnc::none, PosEnc::rope, PosEnc::absolute);
  const bool bos = GENERATE(false, true);
  const auto norm = GENERATE(Norm::rms, Norm::layer, Norm::none);
  // (V, C, H, F, T, B, L): D = 4 and D = 2, one and two layers
  const auto [V, C, H, F, T, B, L] = GENERATE(table<int, int, int, int, int, int, int>({
      {5, 8, 2, 12, 4, 2, 2},
      {7, 6, 3, 10, 3, 3, 1},
  }));
  const auto act = (V == 5) ? Act::gelu : Act::relu;
  ModelConfig cfg;
  cfg.vocab = V;
  cfg.d_model = C;
  cfg.heads = H;
  cfg.d_ff = F;
  cfg.seq_len = T;
  cfg.layers = L;
  cfg.mask = mask;
  cfg.attn = attn;
  cfg.pos = pos;
  cfg.bos = bos;
  cfg.norm = norm;
  cfg.act = act;
  CAPTURE(p0sim::enum_name(mask), p0sim::enum_name(attn), p0sim::enum_name(pos), bos, p0sim::enum_name(norm),
          p0sim::enum_name(act), V, C, H, T, B, L);
  CHECK(model_grad_error(cfg, B, 1000 + static_cast<std::uint64_t>(V)) < 1e-6);
}

TEST_CASE("model gradient matches finite differences with both activations at one shape", "[sim][grad][model]") {
  const auto act = GENERATE(Act::gelu, Act::relu);
  const auto mask = GENERATE(Mask::causal, Mask::prefix_bidirectional);
  ModelConfig cfg;
  cfg.vocab = 6;
  cfg.d_model = 8;
  cfg.heads = 2;
  cfg.d_ff = 16;
  cfg.seq_len = 5;
  cfg.layers = 2;
  cfg.act = act;
  cfg.mask = mask;
  cfg.pos = PosEnc::rope;
  CAPTURE(p0sim::enum_name(act), p0sim::enum_name(mask));
  CHECK(model_grad_error(cfg, 2, 77) < 1e-6);
}

}  // namespace sim_grad_model_test
