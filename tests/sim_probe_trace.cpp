// Probes during training: they must not perturb training, and the emergence steps and
// stages must follow the definitions exactly.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/errors.hpp"
#include "sim/train.hpp"
#include "tests/sim_tiny_config.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_probe_trace_test {

namespace fs = std::filesystem;
using namespace p0sim::sim;

namespace {

TrainConfig tiny_firstrecall() {
  TrainConfig c = p0sim::test::tiny_train_config(Task::firstrecall);
  c.data.trigger_prob = 0.2;
  c.steps = 12;
  c.seed = 3;
  c.probe.batch = 16;  // larger than the training batch: the probe model must be its own
  return c;
}

// A probe record with L layers of H heads and neutral metrics (ratio 1, no direction, no sink).
ProbeRecord record(int step, int L, int H = 2) {
  ProbeRecord r;
  r.step = step;
  r.accuracy = 0.0;
  r.layers.resize(static_cast<std::size_t>(L));
  for (LayerProbe& lp : r.layers) {
    lp.state.p0_norm_ratio = lp.state.p1_norm_ratio = 1.0;
    lp.state.p0_cos = 0.0;
    lp.heads.assign(static_cast<std::size_t>(H), HeadAttention{0.1, 0.1, 0.1});
    lp.sink = sink_metrics(lp.heads, 0.3);
  }
  return r;
}

void make_high_norm(ProbeRecord& r, int layer) {
  r.layers[static_cast<std::size_t>(layer)].state.p0_norm_ratio = 5.0;
  r.layers[static_cast<std::size_t>(layer)].state.p0_cos = 0.95;
}

void make_sink(ProbeRecord& r, int layer, double to0, double to1) {
  LayerProbe& lp = r.layers[static_cast<std::size_t>(layer)];
  lp.heads[0] = HeadAttention{to0, to1, to0};
  lp.sink = sink_metrics(lp.heads, 0.3);
}

}  // namespace

TEST_CASE("probing during training leaves the trained weights bit-identical", "[probe][train]") {
  TrainConfig with = tiny_firstrecall(), without = tiny_firstrecall();
  with.probe.every = 5;
  without.probe.every = 0;
  Model<float> a(with.model, with.batch), b(without.model, without.batch);
  const TrainResult ra = train(a, with);
  const TrainResult rb = train(b, without);
  REQUIRE(ra.probes.size() == 4);  // steps 0, 5, 10 and the last, 12
  CHECK(ra.probes.front().step == 0);
  CHECK(ra.probes.back().step == 12);
  CHECK(rb.probes.empty());
  REQUIRE(a.params().size() == b.params().size());
  CHECK(std::memcmp(a.params().data(), b.params().data(),
                    sizeof(float) * static_cast<std::size_t>(a.params().size())) == 0);
  for (std::size_t s = 0; s < ra.log.size(); ++s) CHECK(ra.log[s].loss == rb.log[s].loss);
  // The fixed probe batch scores firstrecall's triggers, so accuracies are defined.
  CHECK(ra.probes.back().scored > 0);
  CHECK(std::isfinite(ra.probes.back().accuracy));
  CHECK(ra.probes.back().layers.size() == 2);
  CHECK(ra.probes.back().layers[1].heads.size() == 2);
}

TEST_CASE("a claim emerges at the first probe from which it holds at every later probe", "[probe]") {
  ProbeConfig c;
  std::vector<ProbeRecord> trace;
  for (int s = 0; s <= 40; s += 10) trace.push_back(record(s, 2));
  // high norm at 0, lost at 10, back from 20 on: emerges at 20, not 0.
  for (int i : {0, 2, 3, 4}) make_high_norm(trace[static_cast<std::size_t>(i)], 0);
  // A sink in layer 1 at 30 but not at the last probe: never emerged.
  make_sink(trace[3], 1, 0.9, 0.01);
  // Identification at the last two probes: accuracy and active attention both above threshold.
  for (int i : {3, 4}) {
    trace[static_cast<std::size_t>(i)].accuracy = 0.95;
    trace[static_cast<std::size_t>(i)].layers[1].heads[1].attn_to_0_active = 0.8;
  }
  // ... but at 20 only the attention, not the accuracy.
  trace[2].layers[1].heads[1].attn_to_0_active = 0.8;
  const Emergence e = analyse_trace(trace, c, Task::firstrecall);
  CHECK(e.high_norm == 20);
  CHECK_FALSE(e.sink.has_value());
  CHECK(e.identification == 30);
  // Identification is only claimed on firstrecall.
  CHECK_FALSE(analyse_trace(trace, c, Task::lookup).identification.has_value());
}

TEST_CASE("a sink in the first layer does not count when later layers exist", "[probe]") {
  std::vector<ProbeRecord> trace{record(0, 2)};
  make_sink(trace[0], 0, 0.9, 0.0);
  CHECK_FALSE(analyse_trace(trace, ProbeConfig{}, Task::markov).sink.has_value());
  std::vector<ProbeRecord> one_layer{record(0, 1)};
  make_sink(one_layer[0], 0, 0.9, 0.0);
  CHECK(analyse_trace(one_layer, ProbeConfig{}, Task::markov).sink == 0);
}

TEST_CASE("stages follow the paper: none, early in a deeper block, transitional spread, final on position 0",
          "[probe]") {
  ProbeConfig c;
  std::vector<ProbeRecord> t(5, record(0, 4));
  for (int i = 0; i < 5; ++i) t[static_cast<std::size_t>(i)].step = 10 * i;
  // 0: nothing.  1: high norm only in block 3.  2: a sink spread over keys 0 and 1.
  // 3: high norm in block 1 and a sink on key 0.  4: high norm in block 3 with a sink on key 0
  //    (the direction not in the first two blocks: still early).
  make_high_norm(t[1], 3);
  make_high_norm(t[2], 1);
  make_sink(t[2], 2, 0.5, 0.3);
  make_high_norm(t[3], 1);
  make_sink(t[3], 2, 0.9, 0.02);
  make_high_norm(t[4], 3);
  make_sink(t[4], 2, 0.9, 0.02);
  analyse_trace(t, c, Task::markov);
  CHECK(t[0].stage == "none");
  CHECK(t[1].stage == "early");
  CHECK(t[2].stage == "transitional");
  CHECK(t[3].stage == "final");
  CHECK(t[4].stage == "early");
}

TEST_CASE("bad probe settings are rejected naming the configuration field", "[probe]") {
  ProbeConfig c;
  c.every = -1;
  CHECK_THROWS_WITH(validate(c), Catch::Contains("probe_every: "));
  c = {};
  c.batch = 1;
  CHECK_THROWS_WITH(validate(c), Catch::Contains("probe_batch: "));
  c = {};
  c.sink_eps = 1.5;
  CHECK_THROWS_WITH(validate(c), Catch::Contains("sink_eps: "));
  c = {};
  c.emerge_ratio = 0.0;
  CHECK_THROWS_WITH(validate(c), Catch::Contains("emerge_ratio: "));
}

TEST_CASE("with BOS the probe scores the prediction of token t+1 made at model position t+1", "[probe]") {
  // Cross-checks the probe's position bookkeeping against evaluate(), an independent path
  // through the model: with BOS, model position 0 is BOS and input t sits at position t+1.
  const bool bos = GENERATE(false, true);
  CAPTURE(bos);
  TrainConfig c = tiny_firstrecall();
  c.model.bos = bos;
  c.steps = 30;
  c.probe.batch = 24;
  Model<float> model(c.model, c.batch);
  train(model, c);
  DataConfig d = c.data;
  d.seed = c.seed;
  const DataGenerator gen(d);
  Prober prober(c.model, gen, c.probe);
  const ProbeRecord r = prober.probe(model, 30);

  Model<float> eval_model(c.model, c.probe.batch);
  eval_model.params() = model.params();
  const EvalResult e = evaluate(eval_model, prober.rows().data(), c.probe.batch, false);
  const int N = c.probe.batch, T = c.model.seq_len, P = c.model.positions(), V = c.model.vocab;
  long hits = 0, scored = 0;
  for (int n = 0; n < N; ++n)
    for (int t = 0; t < T; ++t) {
      if (prober.kinds()[static_cast<std::size_t>(n * T + t)] == Kind::none) continue;
      const float* z = &e.logits[static_cast<std::size_t>((n * P + t + (bos ? 1 : 0)) * V)];
      hits += std::max_element(z, z + V) - z == prober.rows()[static_cast<std::size_t>(n * (T + 1) + t + 1)];
      ++scored;
    }
  REQUIRE(scored == r.scored);
  REQUIRE(scored > 0);
  CHECK(r.accuracy == static_cast<double>(hits) / static_cast<double>(scored));
  CHECK(r.loss == Approx(e.loss).epsilon(1e-6));
  // The per-layer state metrics read the residual stream after each block.
  const StateMetrics last = state_metrics(&e.hidden[static_cast<std::size_t>(c.model.layers) * N * P * c.model.d_model],
                                          N, P, c.model.d_model);
  CHECK(r.layers.back().state.p0_norm_ratio == Approx(last.p0_norm_ratio).epsilon(1e-9));
}

}  // namespace sim_probe_trace_test
