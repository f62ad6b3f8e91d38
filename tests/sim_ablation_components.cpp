// Component ablations (sim/ablation.hpp, Model::set_ablation): a zero-ablated head is the same
// model as one whose output-projection columns for that head are zero; a mean-ablated MLP writes
// the same vector at every position; ablations refuse a backward; the ablation table's first row
// is the intact model.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sim/ablation.hpp"
#include "sim/data.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_ablation_components_test {

using namespace p0sim::sim;

namespace {
ModelConfig small_model(Mask mask) {
  ModelConfig m;
  m.vocab = 12;
  m.d_model = 16;
  m.heads = 4;
  m.layers = 2;
  m.d_ff = 24;
  m.seq_len = 6;
  m.mask = mask;
  return m;
}
std::vector<std::int32_t> some_rows(int B, int T, int V) {
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B) * (T + 1));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int32_t>((i * 5 + i / 4) % V);
  return rows;
}
}  // namespace

TEST_CASE("zero-ablating a head equals zeroing its columns of the output projection", "[ablation]") {
  const Mask mask = GENERATE(Mask::causal, Mask::prefix_bidirectional);
  const int layer = GENERATE(0, 1), head = GENERATE(0, 3);
  CAPTURE(p0sim::enum_name(mask), layer, head);
  const ModelConfig mc = small_model(mask);
  const auto rows = some_rows(3, mc.seq_len, mc.vocab);
  Model<double> ablated(mc, 3), edited(mc, 3);
  ablated.init(4);
  edited.init(4);
  ablated.set_ablation(layer, head, {});
  const TensorInfo& wo = edited.tensor("blocks." + std::to_string(layer) + ".attn.wo");  // (C,C) out x in
  const int C = mc.d_model, D = C / mc.heads;
  for (int r = 0; r < C; ++r)
    for (int c = head * D; c < (head + 1) * D; ++c) edited.params()[wo.offset + r * C + c] = 0.0;
  const double la = ablated.forward(rows.data(), 3), le = edited.forward(rows.data(), 3);
  CHECK_THAT(la, Catch::Matchers::WithinAbs(le, 1e-12));
  const int n = 3 * mc.positions() * mc.vocab;
  for (int i = 0; i < n; ++i) REQUIRE_THAT(ablated.logits()[i], Catch::Matchers::WithinAbs(edited.logits()[i], 1e-12));
  // Clearing it restores the model.
  ablated.clear_ablation();
  Model<double> intact(mc, 3);
  intact.init(4);
  CHECK(ablated.forward(rows.data(), 3) == intact.forward(rows.data(), 3));
}

TEST_CASE("a mean-ablated MLP writes its mean hidden activation's image at every position", "[ablation]") {
  const ModelConfig mc = small_model(Mask::causal);
  const int B = 3, P = mc.positions(), C = mc.d_model, F = mc.d_ff;
  const auto rows = some_rows(B, mc.seq_len, mc.vocab);
  Model<double> m(mc, B);
  m.init(8);
  m.forward(rows.data(), B);
  const std::vector<double> mean = m.mean_component_output(1, -1);
  REQUIRE(static_cast<int>(mean.size()) == F);
  m.set_ablation(1, -1, mean);
  m.forward(rows.data(), B);
  // The MLP's write h_out - h_mid = W2 mean, the same vector at every position.
  const TensorInfo& w2 = m.tensor("blocks.1.mlp.w2");  // (C,F)
  for (int n = 0; n < B * P; ++n)
    for (int i = 0; i < C; ++i) {
      double expected = 0;
      for (int f = 0; f < F; ++f) expected += m.params()[w2.offset + i * F + f] * mean[static_cast<std::size_t>(f)];
      const double write = m.hidden(2)[n * C + i] - m.hidden_mid(1)[n * C + i];
      REQUIRE_THAT(write, Catch::Matchers::WithinAbs(expected, 1e-12));
    }
  CHECK_THROWS_AS(m.backward(), std::logic_error);  // ablations are for evaluation only
  CHECK_THROWS_AS(m.set_ablation(0, -1, std::vector<double>(3)), std::invalid_argument);  // wrong width
  CHECK_THROWS_AS(m.set_ablation(2, 0, {}), std::out_of_range);
}

TEST_CASE("the ablation table starts with the intact model and covers every layer-0 head and MLP twice", "[ablation]") {
  ModelConfig mc = small_model(Mask::causal);
  DataConfig dc;
  dc.task = Task::firstrecall;
  dc.vocab = mc.vocab;
  dc.seq_len = mc.seq_len;
  dc.triggers = 2;
  ProbeConfig pc;
  pc.every = 1;
  pc.batch = 8;
  Model<float> trained(mc, 1);
  trained.init(2);
  Prober prober(mc, DataGenerator(dc), pc);
  const ProbeRecord intact = prober.probe(trained, 0);
  const auto rows = run_ablations(trained, prober);
  REQUIRE(rows.size() == 1 + 2 * (4 + 2));
  CHECK(rows[0].component == "none");
  CHECK(rows[0].probe.loss == intact.loss);
  CHECK(rows[1].component == "l0.head0");
  CHECK(rows[1].mode == "zero");
  CHECK(rows[2].mode == "mean");
  CHECK(rows.back().component == "l1.mlp");
  // The prober's model is left intact: probing again gives the intact loss.
  CHECK(prober.probe(trained, 0).loss == intact.loss);
  const std::string csv = ablations_csv(rows);
  CHECK(csv.rfind("component,mode,loss,accuracy,first_accuracy,l1_active_attn_to_0,p0_norm_ratio_l0,", 0) == 0);
}

}  // namespace sim_ablation_components_test
