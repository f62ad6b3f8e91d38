// `train --warm-start circuit` (study/warm_start.hpp): the wired weights carried into a training
// model with a wider MLP compute exactly the circuit's forward, meet the high-norm and sink
// criteria at the first probe, and the outcome report follows its stated rules.
#include <catch2/catch.hpp>
#include <cmath>

#include "common/errors.hpp"
#include "sim/data.hpp"
#include "sim/probe_trace.hpp"
#include "study/warm_start.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace theory_warm_start_test {

using namespace p0sim;

namespace {
sim::ModelConfig training_model(int d, int T, int vocab) {
  sim::ModelConfig m;
  m.vocab = vocab;
  m.d_model = d;
  m.heads = 2;
  m.layers = 2;
  m.d_ff = 4 * d;  // wider than the circuit's single neuron
  m.seq_len = T;
  return m;
}
}  // namespace

TEST_CASE("a circuit warm start reproduces the wired forward inside a model with a wider MLP",
          "[circuit][warm-start]") {
  const auto [d, T] = GENERATE(table<int, int>({{16, 8}, {32, 16}}));
  CAPTURE(d, T);
  const sim::ModelConfig mc = training_model(d, T, d / 2);
  const study::CircuitPoint p = study::warm_start_point(mc, study::CircuitPoint{});
  sim::Model<float> model(mc, 4);
  study::warm_start_from_circuit(model, p, 5, 0.0);
  sim::Model<double> wired(study::circuit_model_config(p), 4);
  study::wire_circuit(wired, p, 5);

  std::vector<std::int32_t> rows(4 * (T + 1));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int32_t>((i * 7 + i / 3) % mc.vocab);
  model.forward(rows.data(), 4);
  wired.forward(rows.data(), 4);
  for (int l = 0; l <= 2; ++l) {
    const float* a = model.hidden(l);
    const double* b = wired.hidden(l);
    double worst = 0, scale = 0;
    for (int i = 0; i < 4 * T * d; ++i) {
      worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
      scale = std::max(scale, std::fabs(b[i]));
    }
    CAPTURE(l, worst, scale);
    // float weights and activations against double: relative 1e-5 of the largest entry (c = 100).
    CHECK(worst <= 1e-5 * scale);
  }
}

TEST_CASE("the warm-started circuit meets the high-norm and sink criteria before training", "[circuit][warm-start]") {
  const sim::ModelConfig mc = training_model(64, 32, 32);
  const study::CircuitPoint p = study::warm_start_point(mc, study::CircuitPoint{});
  sim::Model<float> model(mc, 1);
  study::warm_start_from_circuit(model, p, 9, 0.01);
  sim::DataConfig dc;
  dc.task = sim::Task::uniform;
  dc.vocab = mc.vocab;
  dc.seq_len = mc.seq_len;
  sim::ProbeConfig pc;
  pc.every = 1;
  pc.batch = 32;
  sim::Prober prober(mc, sim::DataGenerator(dc), pc);
  std::vector<sim::ProbeRecord> trace{prober.probe(model, 0)};
  sim::analyse_trace(trace, pc, dc.task);
  CHECK(trace[0].high_norm);
  CHECK(trace[0].sink);
  CHECK(study::warm_start_report(trace)["outcome"] == "kept");  // one probe: held at the start and the end
}

TEST_CASE("the warm-start report says not-held, dismantled, kept or sharpened by its rules", "[warm-start]") {
  auto record = [](double ratio, bool high, bool sink) {
    sim::ProbeRecord r;
    r.layers.resize(2);
    r.layers[1].state.p0_norm_ratio = ratio;
    r.high_norm = high;
    r.sink = sink;
    return r;
  };
  CHECK(study::warm_start_report({record(1.0, false, true), record(5, true, true)})["outcome"] == "not-held");
  CHECK(study::warm_start_report({record(5, true, true), record(5, true, false)})["outcome"] == "dismantled");
  CHECK(study::warm_start_report({record(5, true, true), record(6.2, true, true)})["outcome"] == "kept");
  CHECK(study::warm_start_report({record(5, true, true), record(6.3, true, true)})["outcome"] == "sharpened");
}

TEST_CASE("a warm start refuses an architecture that cannot carry the circuit, naming --warm-start", "[warm-start]") {
  sim::ModelConfig mc = training_model(32, 16, 16);
  auto refused = [&] {
    try {
      study::warm_start_point(mc, study::CircuitPoint{});
    } catch (const UsageError& e) {
      return std::string(e.what()).rfind("--warm-start: ", 0) == 0;
    }
    return false;
  };
  SECTION("three layers") {
    mc.layers = 3;
    CHECK(refused());
  }
  SECTION("rope") {
    mc.pos = sim::PosEnc::rope;
    CHECK(refused());
  }
  SECTION("BOS") {
    mc.bos = true;
    CHECK(refused());
  }
  SECTION("vocab too large for an orthogonal direction") {
    mc.vocab = 31;
    CHECK(refused());
  }
  SECTION("layer norm") {
    mc.norm = sim::Norm::layer;
    CHECK(refused());
  }
}

}  // namespace theory_warm_start_test
