// The model as a whole: layout, init, loss at init, overfitting, masks, float vs double,
// determinism, validation.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "common/rng.hpp"
#include "sim/gemm.hpp"
#include "sim/model.hpp"
#include "sim/optimizer.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_model_behaviour_test {

using namespace p0sim::sim;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

std::vector<std::int32_t> random_rows(int B, int T, int V, std::uint64_t seed) {
  p0sim::PhiloxStream rng(seed, 0);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B * (T + 1)));
  for (auto& r : rows) r = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(V)));
  return rows;
}

ModelConfig small_config() {
  ModelConfig c;
  c.vocab = 16;
  c.d_model = 32;
  c.heads = 2;
  c.d_ff = 64;
  c.seq_len = 8;
  c.layers = 2;
  return c;
}

}  // namespace

TEST_CASE("parameter layout follows DESIGN.md names, shapes and order", "[sim][model]") {
  ModelConfig c = small_config();
  c.bos = true;
  c.pos = PosEnc::absolute;
  c.norm = Norm::layer;
  const auto layout = parameter_layout(c);
  const std::vector<std::string> expect = {
      "tok_emb",          "pos_emb",          "blocks.0.norm1.weight", "blocks.0.norm1.bias",   "blocks.0.attn.wq",
      "blocks.0.attn.wk", "blocks.0.attn.wv", "blocks.0.attn.wo",      "blocks.0.norm2.weight", "blocks.0.norm2.bias",
      "blocks.0.mlp.w1",  "blocks.0.mlp.w2",  "blocks.1.norm1.weight", "blocks.1.norm1.bias",   "blocks.1.attn.wq",
      "blocks.1.attn.wk", "blocks.1.attn.wv", "blocks.1.attn.wo",      "blocks.1.norm2.weight", "blocks.1.norm2.bias",
      "blocks.1.mlp.w1",  "blocks.1.mlp.w2",  "norm_f.weight",         "norm_f.bias",           "lm_head"};
  REQUIRE(layout.size() == expect.size());
  Eigen::Index offset = 0;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    CHECK(layout[i].name == expect[i]);
    CHECK(layout[i].offset == offset);
    offset += layout[i].size;
    CHECK(layout[i].decay == (layout[i].shape.size() == 2));  // matrices decay, gains and biases not
  }
  CHECK(layout[0].shape == std::vector<Eigen::Index>{17, 32});  // V+1 rows with BOS
  CHECK(layout[1].shape == std::vector<Eigen::Index>{9, 32});   // T+1 positions with BOS
  CHECK(layout[10].shape == std::vector<Eigen::Index>{64, 32});
  CHECK(layout[11].shape == std::vector<Eigen::Index>{32, 64});
  CHECK(layout.back().shape == std::vector<Eigen::Index>{16, 32});

  c.bos = false;
  c.pos = PosEnc::rope;
  c.norm = Norm::rms;
  const auto plain = parameter_layout(c);
  CHECK(plain.size() == 2 + 8 * 2 + 1);  // no pos_emb, no biases
  CHECK(plain[0].shape == std::vector<Eigen::Index>{16, 32});
}

TEST_CASE("init follows DESIGN.md: matrices N(0, 0.02^2), residual projections scaled, gains 1", "[sim][model]") {
  ModelConfig c = small_config();
  c.d_model = 64;
  c.d_ff = 256;
  c.layers = 2;
  c.norm = Norm::layer;
  Model<double> m(c, 1);
  m.init(5);
  auto sd = [&](const std::string& name) {
    const auto& t = m.tensor(name);
    const auto x = m.params().segment(t.offset, t.size);
    return std::sqrt(x.squaredNorm() / static_cast<double>(t.size));
  };
  // The sample rms of n = 4096..16384 normals has relative sd 1/sqrt(2n) <= 1.1%; 5% is > 4 sd.
  CHECK_THAT(sd("blocks.0.attn.wq"), WithinRel(0.02, 0.05));
  CHECK_THAT(sd("blocks.1.mlp.w1"), WithinRel(0.02, 0.05));
  CHECK_THAT(sd("blocks.0.attn.wo"), WithinRel(0.02 / std::sqrt(4.0), 0.05));
  CHECK_THAT(sd("blocks.1.mlp.w2"), WithinRel(0.02 / std::sqrt(4.0), 0.05));
  CHECK(m.params().segment(m.tensor("norm_f.weight").offset, 64).isOnes());
  CHECK(m.params().segment(m.tensor("blocks.0.norm2.bias").offset, 64).isZero());
  CHECK_THROWS_AS(m.tensor("nope"), std::out_of_range);
}

TEST_CASE("torch init follows PyTorch's module defaults: embeddings N(0,1), linear weights U(+-1/sqrt(fan_in))",
          "[sim][model]") {
  ModelConfig c = small_config();
  c.d_model = 64;
  c.d_ff = 256;
  c.layers = 2;
  c.norm = Norm::layer;
  c.pos = PosEnc::absolute;
  Model<double> m(c, 1);
  m.init(5, Init::torch);
  auto values = [&](const std::string& name) {
    const auto& t = m.tensor(name);
    return Eigen::VectorXd(m.params().segment(t.offset, t.size));
  };
  auto rms = [](const Eigen::VectorXd& x) { return std::sqrt(x.squaredNorm() / static_cast<double>(x.size())); };
  // rms of n >= 64*64 draws: relative sd below 1/sqrt(n) * 1.2 <= 2%; 8% is > 4 sd.
  CHECK_THAT(rms(values("tok_emb")), WithinRel(1.0, 0.08));
  CHECK_THAT(rms(values("pos_emb")), WithinRel(1.0, 0.08));
  // U(-b, b) has rms b/sqrt(3) and never leaves [-b, b]; fan_in is the last dimension
  for (const auto& [name, fan_in] : {std::pair<std::string, double>{"blocks.0.attn.wq", 64},
                                     {"blocks.1.mlp.w1", 64},
                                     {"blocks.1.mlp.w2", 256},
                                     {"lm_head", 64}}) {
    CAPTURE(name);
    const Eigen::VectorXd x = values(name);
    CHECK(x.cwiseAbs().maxCoeff() <= 1.0 / std::sqrt(fan_in));
    CHECK_THAT(rms(x), WithinRel(1.0 / std::sqrt(3.0 * fan_in), 0.08));
  }
  CHECK(values("blocks.0.norm1.weight").isOnes());
  CHECK(values("blocks.0.norm1.bias").isZero());
}

TEST_CASE("position 0's value is what causal attention adds at position 0 through W_o", "[sim][model]") {
  // In layer 0 position 0 attends only to itself, so its attention sublayer adds exactly W_o v_0:
  // this pins value_at_position0 and the (out, in) layout the value-drain probe reads W_o with.
  ModelConfig c = small_config();
  c.heads = 1;
  const int B = 2, C = c.d_model, P = c.seq_len;
  Model<double> m(c, B);
  m.init(8);
  const auto rows = random_rows(B, c.seq_len, c.vocab, 9);
  m.forward(rows.data(), B);
  const auto& wo = m.tensor("blocks.0.attn.wo");
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> w(
      m.params().data() + wo.offset, C, C);
  for (int b = 0; b < B; ++b) {
    const Eigen::Map<const Eigen::VectorXd> v(m.value_at_position0(0, b), C);
    const Eigen::Map<const Eigen::VectorXd> before(m.hidden(0) + static_cast<long>(b) * P * C, C);
    const Eigen::Map<const Eigen::VectorXd> after(m.hidden_mid(0) + static_cast<long>(b) * P * C, C);
    CHECK(((after - before) - w * v).norm() <= 1e-12 * (1.0 + (w * v).norm()));
  }
}

TEST_CASE("prefix-bidirectional position 0's value is read from the pass asked for", "[sim][model]") {
  ModelConfig c = small_config();
  c.mask = Mask::prefix_bidirectional;
  const int B = 2, C = c.d_model, P = c.seq_len;
  Model<double> m(c, B);
  m.init(8);
  const auto rows = random_rows(B, c.seq_len, c.vocab, 9);
  m.forward(rows.data(), B);
  for (int b = 0; b < B; ++b) {
    // layer 0: position 0's value is its own token's, the same in every pass
    const Eigen::Map<const Eigen::VectorXd> first(m.value_at_position0(0, b, 0), C);
    const Eigen::Map<const Eigen::VectorXd> last(m.value_at_position0(0, b, P - 1), C);
    CHECK(first == last);
    // layer 1: in the pass over 0..P-1 position 0 has attended to the later tokens, in pass 0 to none
    const Eigen::Map<const Eigen::VectorXd> alone(m.value_at_position0(1, b, 0), C);
    const Eigen::Map<const Eigen::VectorXd> mixed(m.value_at_position0(1, b, P - 1), C);
    CHECK((alone - mixed).norm() > 1e-6 * alone.norm());
  }
  CHECK_THROWS_AS(m.value_at_position0(0, 0, P), std::out_of_range);
}

TEST_CASE("an untrained model's loss is near ln V", "[sim][model]") {
  ModelConfig c = small_config();
  c.vocab = 64;
  c.d_model = 64;
  c.d_ff = 256;
  c.seq_len = 32;
  const int B = 8;
  Model<float> m(c, B);
  m.init(3);
  const auto rows = random_rows(B, c.seq_len, c.vocab, 4);
  const double loss = m.forward(rows.data(), B);
  // Logits are ~N(0, s^2) with s^2 = 0.02^2 * ||norm_f(x)||^2 = 0.0004 C = 0.026, so
  // E[loss] ~ ln V + s^2/2 = ln V + 0.013; over B*T = 256 predictions the per-token spread s = 0.16
  // gives a standard error 0.01. Tolerance 0.06 > 0.013 + 4 standard errors.
  CHECK_THAT(loss, WithinAbs(std::log(64.0), 0.06));
}

TEST_CASE("the model overfits one small batch", "[sim][model]") {
  ModelConfig c = small_config();  // V=16, C=32, H=2, L=2, T=8
  const int B = 4;
  // distinct first tokens, so every causal prefix is distinct and every target is learnable
  auto rows = random_rows(B, c.seq_len, c.vocab, 9);
  for (int b = 0; b < B; ++b) rows[static_cast<std::size_t>(b * (c.seq_len + 1))] = b;
  Model<float> m(c, B);
  m.init(1);
  OptimizerConfig oc;
  oc.weight_decay = 0.0;
  Optimizer<float> opt(m.layout(), oc);
  const float first = m.forward(rows.data(), B);
  float loss = first;
  for (int step = 0; step < 300; ++step) {
    loss = m.forward(rows.data(), B);
    m.zero_grad();
    m.backward();
    opt.step(m.params(), m.grads(), 3e-3);
  }
  loss = m.forward(rows.data(), B);
  INFO("loss " << first << " -> " << loss);
  CHECK(first > 2.5f);  // ~ln 16 = 2.77
  CHECK(loss < 0.05f);  // memorised: 32 predictions, each at p > 0.95 on average
}

TEST_CASE("causal mask: earlier logits ignore later tokens; bidirectional ones do not", "[sim][model]") {
  const auto mask = GENERATE(Mask::causal, Mask::bidirectional, Mask::prefix_bidirectional);
  ModelConfig c = small_config();
  c.mask = mask;
  const int B = 1, P = c.seq_len;
  Model<double> m(c, B);
  m.init(2);
  m.params() *= 20.0;  // large weights, so a dependence is visible far above round-off
  auto rows = random_rows(B, c.seq_len, c.vocab, 3);
  m.forward(rows.data(), B);
  std::vector<double> before(m.logits(), m.logits() + P * c.vocab);
  rows[5] = (rows[5] + 1) % c.vocab;  // input position 5
  m.forward(rows.data(), B);
  double early = 0;  // positions 0..4
  for (int i = 0; i < 5 * c.vocab; ++i) early = std::max(early, std::abs(m.logits()[i] - before[i]));
  CAPTURE(p0sim::enum_name(mask), early);
  if (mask == Mask::bidirectional)
    CHECK(early > 1e-3);
  else
    CHECK(early == 0.0);
}

TEST_CASE("prefix-bidirectional position t equals a bidirectional pass over the prefix 0..t", "[sim][model]") {
  ModelConfig c = small_config();
  c.mask = Mask::prefix_bidirectional;
  c.seq_len = 5;
  c.bos = GENERATE(false, true);
  const int B = 2, P = c.positions();
  Model<double> m(c, B);
  m.init(8);
  m.params() *= 10.0;
  const auto rows = random_rows(B, c.seq_len, c.vocab, 5);
  m.forward(rows.data(), B);
  for (int t = 2; t < P; ++t) {  // bidirectional model needs seq_len >= 2
    ModelConfig bc = c;
    bc.mask = Mask::bidirectional;
    bc.seq_len = c.bos ? t : t + 1;  // positions 0..t
    Model<double> ref(bc, B);
    ref.params() = m.params();
    std::vector<std::int32_t> prefix;
    for (int b = 0; b < B; ++b)
      for (int i = 0; i <= bc.seq_len; ++i) prefix.push_back(rows[static_cast<std::size_t>(b * (c.seq_len + 1) + i)]);
    ref.forward(prefix.data(), B);
    for (int b = 0; b < B; ++b)
      for (int v = 0; v < c.vocab; ++v)
        CHECK_THAT(m.logits()[(b * P + t) * c.vocab + v],
                   WithinAbs(ref.logits()[(b * bc.positions() + t) * c.vocab + v], 1e-12));
    // attention row t of layer 1 is the last row of the reference's
    for (int h = 0; h < c.heads; ++h)
      for (int k = 0; k < P; ++k) {
        const double got = m.attention(1)[((0 * c.heads + h) * P + t) * P + k];
        const double want = k <= t ? ref.attention(1)[((0 * c.heads + h) * (t + 1) + t) * (t + 1) + k] : 0.0;
        CHECK_THAT(got, WithinAbs(want, 1e-12));
      }
  }
}

TEST_CASE("causal softmax attention of position 0 is all on itself", "[sim][model]") {
  ModelConfig c = small_config();
  const int B = 2, P = c.seq_len;
  Model<float> m(c, B);
  m.init(4);
  const auto rows = random_rows(B, c.seq_len, c.vocab, 6);
  m.forward(rows.data(), B);
  for (int l = 0; l < c.layers; ++l)
    for (int h = 0; h < c.heads; ++h) {
      const float* A = m.attention(l) + ((1 * c.heads + h) * P) * P;  // row b=1, query 0
      CHECK(A[0] == 1.0f);
      for (int k = 1; k < P; ++k) CHECK(A[k] == 0.0f);
    }
  // hidden(0) is the embedding of the token
  const auto& te = m.tensor("tok_emb");
  for (int i = 0; i < c.d_model; ++i)
    CHECK(m.hidden(0)[c.d_model * 3 + i] == m.params()[te.offset + rows[3] * c.d_model + i]);
}

TEST_CASE("without positions, a row of one repeated token attends exactly uniformly in the first layer",
          "[sim][model]") {
  // Gu et al.'s negative control: with NoPE and no BOS every position of such a row has the same
  // state, so the scores of a query are all equal and softmax gives 1/(visible keys) exactly.
  // Later layers see states that differ only by the rounding of those averages.
  ModelConfig c = small_config();
  c.mask = GENERATE(Mask::causal, Mask::bidirectional);
  const int B = 2, P = c.seq_len;
  Model<float> m(c, B);
  m.init(7);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B * (c.seq_len + 1)), 5);
  m.forward(rows.data(), B);
  for (int l = 0; l < c.layers; ++l)
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < c.heads; ++h)
        for (int t = 0; t < P; ++t) {
          const int visible = c.mask == Mask::causal ? t + 1 : P;
          const float* A = m.attention(l) + ((b * c.heads + h) * P + t) * P;
          for (int k = 0; k < visible; ++k) {
            CAPTURE(l, b, h, t, k);
            if (l == 0)
              CHECK(A[k] == 1.0f / static_cast<float>(visible));
            else
              CHECK_THAT(A[k], WithinRel(1.0f / static_cast<float>(visible), 1e-5f));
          }
        }
}

TEST_CASE("float and double forward and backward agree", "[sim][model]") {
  ModelConfig c = small_config();
  c.pos = PosEnc::rope;
  c.attn = GENERATE(Attn::softmax, Attn::sigmoid, Attn::relu);
  const int B = 3;
  Model<float> mf(c, B);
  Model<double> md(c, B);
  md.init(12);
  md.params() *= 5.0;
  mf.params() = md.params().cast<float>();
  const auto rows = random_rows(B, c.seq_len, c.vocab, 13);
  const double lf = mf.forward(rows.data(), B), ld = md.forward(rows.data(), B);
  // float carries ~6e-8 relative round-off per operation through a few hundred-term sums
  CHECK_THAT(lf, WithinRel(ld, 1e-5));
  mf.zero_grad();
  mf.backward();
  md.zero_grad();
  md.backward();
  const Eigen::VectorXd gf = mf.grads().cast<double>();
  CHECK((gf - md.grads()).norm() / md.grads().norm() < 1e-4);
}

TEST_CASE("training is deterministic: same seed and batches give bit-identical weights", "[sim][model]") {
  ModelConfig c = small_config();
  const int B = 4;
  auto run = [&] {
    Model<float> m(c, B);
    m.init(21);
    Optimizer<float> opt(m.layout(), OptimizerConfig{});
    for (int s = 0; s < 5; ++s) {
      const auto rows = random_rows(B, c.seq_len, c.vocab, 100 + static_cast<std::uint64_t>(s));
      m.forward(rows.data(), B);
      m.zero_grad();
      m.backward();
      opt.step(m.params(), m.grads(), 1e-3);
    }
    return Eigen::VectorXf(m.params());
  };
  const Eigen::VectorXf a = run(), b = run();
  CHECK(a == b);
}

TEST_CASE("smaller batches than max_batch and bad tokens are handled", "[sim][model]") {
  ModelConfig c = small_config();
  Model<double> big(c, 4), one(c, 1);
  big.init(1);
  one.init(1);
  const auto rows = random_rows(4, c.seq_len, c.vocab, 1);
  big.forward(rows.data(), 4);
  const double l1 = big.forward(rows.data(), 1);
  CHECK(big.last_batch() == 1);
  CHECK(l1 == one.forward(rows.data(), 1));
  auto bad = rows;
  bad[3] = c.vocab;
  CHECK_THROWS_AS(big.forward(bad.data(), 1), p0sim::UsageError);
  CHECK_THROWS(big.forward(rows.data(), 5));
}

TEST_CASE("validate rejects impossible configurations naming the configuration field", "[sim][model]") {
  auto expect = [](ModelConfig c, const std::string& option) {
    try {
      validate(c);
      FAIL("accepted a bad config for " << option);
    } catch (const p0sim::UsageError& e) {
      CHECK(std::string(e.what()).rfind(option + ":", 0) == 0);
    }
  };
  ModelConfig c = small_config();
  CHECK_NOTHROW(validate(c));
  ModelConfig bad = c;
  bad.heads = 3;
  expect(bad, "heads");
  bad = c;
  bad.d_model = 12;
  bad.heads = 4;  // D = 3
  bad.pos = PosEnc::rope;
  expect(bad, "pos");
  bad = c;
  bad.seq_len = 1;
  expect(bad, "seq_len");
  bad = c;
  bad.vocab = 1;
  expect(bad, "vocab");
  bad = c;
  bad.layers = 0;
  expect(bad, "layers");
}

TEST_CASE("GEMM blocking follows the engine's fixed cache sizes, not the CPU's", "[sim][model]") {
  // Once a model exists, Eigen blocks its products for the pinned caches whatever this CPU has.
  // (On a machine whose caches Eigen reads as exactly the pinned ones this holds without the pin
  // too; on any other, removing the pin fails here.)
  const Model<float> m(small_config(), 2);
  CHECK(Eigen::l1CacheSize() == p0sim::sim::kPinnedL1);
  CHECK(Eigen::l2CacheSize() == p0sim::sim::kPinnedL2);
  CHECK(Eigen::l3CacheSize() == p0sim::sim::kPinnedL3);
}

}  // namespace sim_model_behaviour_test
