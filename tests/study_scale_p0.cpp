// study::scale_p0, the computation behind `p0sim scale-p0`: at factor 1 it is the unscaled model;
// its slope is the loss's derivative along log(factor); its attention columns are the mean over
// heads, rows and queries t >= 0 of the weight on key 0 (trace.csv's attn_to_0), for the blocks after the scaled one
// only.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "sim/data.hpp"
#include "sim/probe_trace.hpp"
#include "study/scale_p0.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace study_scale_p0_test {

using namespace p0sim;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

struct Fixture {
  sim::ModelConfig model;
  std::vector<float> params;
  std::vector<std::int32_t> rows;  // (N,T+1)
  std::vector<sim::Kind> kinds;    // (N,T)
  int N = 6;
};

Fixture firstrecall_fixture(bool bos) {
  Fixture f;
  f.model.vocab = 12;
  f.model.d_model = 16;
  f.model.heads = 4;
  f.model.layers = 3;
  f.model.d_ff = 24;
  f.model.seq_len = 8;
  f.model.bos = bos;
  sim::Model<float> m(f.model, 1);
  m.init(7);
  // Larger weights than the init's, as after training: embeddings far above the norms' epsilon,
  // and blocks whose writes are not negligible against them (so the loss feels the scale).
  for (const sim::TensorInfo& t : m.layout())
    if (t.decay) m.params().segment(t.offset, t.size) *= t.name == "tok_emb" ? 25.0f : 10.0f;
  f.params.assign(m.params().data(), m.params().data() + m.params().size());
  sim::DataConfig dc;
  dc.task = sim::Task::firstrecall;
  dc.vocab = f.model.vocab;
  dc.seq_len = f.model.seq_len;
  dc.triggers = 2;
  dc.trigger_prob = 0.2;
  const sim::DataGenerator data(dc);
  f.rows.resize(static_cast<std::size_t>(f.N) * (f.model.seq_len + 1));
  f.kinds.resize(static_cast<std::size_t>(f.N) * f.model.seq_len);
  data.fill(1, 0, f.N, f.rows.data(), f.kinds.data());
  return f;
}

// The loss of the double model with position 0 scaled by `factor` after block `layer`.
double scaled_loss(const Fixture& f, int layer, double factor) {
  sim::Model<double> m(f.model, f.N);
  m.params() = Eigen::Map<const Eigen::VectorXf>(f.params.data(), m.params().size()).cast<double>();
  m.set_position0_scale(layer, factor);
  return m.forward(f.rows.data(), f.N);
}

}  // namespace

TEST_CASE("scale_p0 at factor 1 is the unscaled model, and its slope is the derivative along log(factor)",
          "[study][p0scale]") {
  const bool bos = GENERATE(false, true);
  CAPTURE(bos);
  const Fixture f = firstrecall_fixture(bos);
  study::ScaleP0Options o;
  o.layers = {0, 1};
  o.factors = {0.5, 1.0, 4.0};
  o.sink_eps = 0.3;
  const auto rows = study::scale_p0(f.model, f.params, f.rows, f.kinds, o);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].layer == 0);
  CHECK(rows[3].layer == 1);
  CHECK(rows[4].factor == 1.0);

  // The intact double model, its loss, accuracy and attention.
  const int N = f.N, P = f.model.positions(), H = f.model.heads, L = f.model.layers;
  sim::Model<double> intact(f.model, N);
  intact.params() = Eigen::Map<const Eigen::VectorXf>(f.params.data(), intact.params().size()).cast<double>();
  const double loss = intact.forward(f.rows.data(), N);
  sim::ProbeRecord scored;
  sim::score_accuracy(scored, intact.logits(), f.rows.data(), f.kinds.data(), N, f.model);
  REQUIRE(scored.scored > 0);
  for (const study::ScaleP0Row* r : {&rows[1], &rows[4]}) {
    CAPTURE(r->layer);
    CHECK(r->loss == loss);
    CHECK(r->accuracy == scored.accuracy);
    for (int k = 0; k < L; ++k) {
      CAPTURE(k);
      if (k <= r->layer) {
        CHECK(std::isnan(r->attn_to_0[static_cast<std::size_t>(k)]));
        CHECK(std::isnan(r->sink_rate[static_cast<std::size_t>(k)]));
        continue;
      }
      // trace.csv's definitions: the mean over heads, rows and queries t >= 0 of A[t,0]; a head sinks
      // when its own mean exceeds eps.
      double total = 0, sinking = 0;
      for (int h = 0; h < H; ++h) {
        double head = 0;
        for (int n = 0; n < N; ++n)
          for (int t = 0; t < P; ++t) head += intact.attention(k)[((n * H + h) * P + t) * P];
        head /= N * P;
        total += head / H;
        sinking += head > o.sink_eps ? 1.0 / H : 0.0;
      }
      CHECK_THAT(r->attn_to_0[static_cast<std::size_t>(k)], WithinRel(total, 1e-12));
      CHECK_THAT(r->sink_rate[static_cast<std::size_t>(k)], WithinAbs(sinking, 1e-12));
    }
  }

  // The slope against a central difference ten times wider (O(h^2) apart: ~1e-4 relative).
  for (const study::ScaleP0Row& r : rows) {
    CAPTURE(r.layer, r.factor, r.dloss_dlogfactor);
    const double h = 1e-2;
    const double wide =
        (scaled_loss(f, r.layer, r.factor * std::exp(h)) - scaled_loss(f, r.layer, r.factor * std::exp(-h))) / (2 * h);
    CHECK(std::fabs(r.dloss_dlogfactor) > 1e-5);  // the comparison below has something to compare
    CHECK_THAT(r.dloss_dlogfactor, WithinRel(wide, 1e-3));
    CHECK(r.loss == scaled_loss(f, r.layer, r.factor));
  }
}

TEST_CASE("scale_p0's CSV has attention columns for the blocks after the first scaled one, empty before the row's own",
          "[study][p0scale]") {
  const Fixture f = firstrecall_fixture(false);
  study::ScaleP0Options o;
  o.layers = {1, 0};
  o.factors = {2.0};
  const std::string csv = study::scale_p0_csv(study::scale_p0(f.model, f.params, f.rows, f.kinds, o));
  std::istringstream in(csv);
  std::string header, first, second, extra;
  std::getline(in, header);
  std::getline(in, first);
  std::getline(in, second);
  CHECK(header == "layer,factor,loss,dloss_dlogfactor,attn_to_0_l1,attn_to_0_l2,sink_rate_l1,sink_rate_l2,accuracy");
  CHECK(first.rfind("1,2,", 0) == 0);
  CHECK(second.rfind("0,2,", 0) == 0);
  // Layer 1's row: blocks 1 (empty) and 2 (a number) for each metric; 9 cells either way.
  CHECK(std::count(first.begin(), first.end(), ',') == 8);
  CHECK(first.find(",,") != std::string::npos);
  CHECK(second.find(",,") == std::string::npos);
  CHECK_FALSE(std::getline(in, extra));
}

TEST_CASE("scale_p0 rejects a layer outside the model and a factor that is not finite and positive",
          "[study][p0scale]") {
  const Fixture f = firstrecall_fixture(false);
  study::ScaleP0Options o;
  o.factors = {1.0};
  o.layers = {3};
  CHECK_THROWS_AS(study::scale_p0(f.model, f.params, f.rows, f.kinds, o), std::out_of_range);
  o.layers = {0};
  for (double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    o.factors = {bad};
    CHECK_THROWS_AS(study::scale_p0(f.model, f.params, f.rows, f.kinds, o), std::invalid_argument);
  }
}

}  // namespace study_scale_p0_test
