// Scaling position 0's residual stream (Model::set_position0_scale): a factor of 1 changes no bit;
// a factor alpha multiplies the state after block l at position 0 of every row and every prefix
// pass, and nothing before it or beside it; RMSNorm takes the scale out again up to its epsilon, and
// without a norm the next block reads it;
// the scale is for evaluation only and clearing it restores the model.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "common/enum_names.hpp"
#include "sim/layers/norm.hpp"
#include "sim/model.hpp"
#include "sim/model_views.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_position0_scale_test {

using namespace p0sim::sim;

namespace {

enum class Variant { causal, prefix, bos };

ModelConfig small_model(Variant v) {
  ModelConfig m;
  m.vocab = 12;
  m.d_model = 16;
  m.heads = 4;
  m.layers = 3;
  m.d_ff = 24;
  m.seq_len = 6;
  m.mask = v == Variant::prefix ? Mask::prefix_bidirectional : Mask::causal;
  m.bos = v == Variant::bos;
  return m;
}

const char* name(Variant v) { return v == Variant::causal ? "causal" : v == Variant::prefix ? "prefix" : "bos"; }

std::vector<std::int32_t> some_rows(int B, int T, int V) {
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B) * (T + 1));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int32_t>((i * 7 + i / 3) % V);
  return rows;
}

template <typename S>
std::vector<S> copy(const S* p, std::size_t n) {
  return std::vector<S>(p, p + n);
}

// Factor 1 against no intervention, for one scalar type: logits, loss and every hidden state.
template <typename S>
void check_factor_one_is_identity(Variant v, int layer) {
  const ModelConfig mc = small_model(v);
  const int B = 3, P = mc.positions();
  const auto rows = some_rows(B, mc.seq_len, mc.vocab);
  Model<S> plain(mc, B), scaled(mc, B);
  plain.init(11);
  scaled.init(11);
  scaled.set_position0_scale(layer, S(1));
  const S lp = plain.forward(rows.data(), B), ls = scaled.forward(rows.data(), B);
  CHECK(lp == ls);
  const std::size_t nl = static_cast<std::size_t>(B) * P * mc.vocab, nh = static_cast<std::size_t>(B) * P * mc.d_model;
  CHECK(copy(plain.logits(), nl) == copy(scaled.logits(), nl));
  for (int l = 0; l <= mc.layers; ++l) CHECK(copy(plain.hidden(l), nh) == copy(scaled.hidden(l), nh));
}

// Sets the scale on `scaled` only and runs both models forward on the same rows.
void scale_and_forward(Model<double>& plain, Model<double>& scaled, int layer, double alpha,
                       const std::vector<std::int32_t>& rows, int B) {
  scaled.set_position0_scale(layer, alpha);
  plain.forward(rows.data(), B);
  scaled.forward(rows.data(), B);
}

}  // namespace

TEST_CASE("a position-0 scale of 1 changes no bit of the logits, the loss or the hidden states", "[sim][p0scale]") {
  const Variant v = GENERATE(Variant::causal, Variant::prefix, Variant::bos);
  const int layer = GENERATE(0, 1, 2);
  CAPTURE(name(v), layer);
  check_factor_one_is_identity<float>(v, layer);
  check_factor_one_is_identity<double>(v, layer);
}

TEST_CASE("scaling position 0 after block l multiplies its state there by the factor and nothing else before block l+1",
          "[sim][p0scale]") {
  const Variant v = GENERATE(Variant::causal, Variant::prefix, Variant::bos);
  const int layer = GENERATE(0, 1);
  const double alpha = 3.0;
  CAPTURE(name(v), layer);
  const ModelConfig mc = small_model(v);
  const int B = 3, P = mc.positions(), C = mc.d_model, V = mc.vocab;
  const auto rows = some_rows(B, mc.seq_len, V);
  Model<double> plain(mc, B), scaled(mc, B);
  plain.init(5);
  scaled.init(5);
  scale_and_forward(plain, scaled, layer, alpha, rows, B);
  // Through the accessors: position 0 of every row scaled, every later position and every earlier
  // state untouched.
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < P; ++t)
      for (int i = 0; i < C; ++i) {
        const std::size_t at = (static_cast<std::size_t>(b) * P + t) * C + i;
        const double before = plain.hidden(layer + 1)[at], after = scaled.hidden(layer + 1)[at];
        if (t == 0)
          REQUIRE_THAT(after, Catch::Matchers::WithinRel(alpha * before, 1e-15));
        else
          REQUIRE(after == before);
        for (int l = 0; l <= layer; ++l) REQUIRE(scaled.hidden(l)[at] == plain.hidden(l)[at]);
      }
  // In the buffer itself: under prefix-bidirectional every pass has its own position 0 (column 0 of
  // the pass over 0..t, t = 0..P-1), and each is scaled; no other column is.
  const auto& res_plain = plain.activation_views().res[static_cast<std::size_t>(layer + 1)];
  const auto& res_scaled = scaled.activation_views().res[static_cast<std::size_t>(layer + 1)];
  const int passes = v == Variant::prefix ? P : 1;
  int col = 0, scaled_cols = 0;
  for (int b = 0; b < B; ++b)
    for (int pass = 0; pass < passes; ++pass) {
      const int len = v == Variant::prefix ? pass + 1 : P;
      for (int pos = 0; pos < len; ++pos, ++col)
        for (int i = 0; i < C; ++i) {
          if (pos == 0)
            REQUIRE_THAT(res_scaled(i, col), Catch::Matchers::WithinRel(alpha * res_plain(i, col), 1e-15));
          else
            REQUIRE(res_scaled(i, col) == res_plain(i, col));
        }
      ++scaled_cols;
    }
  CHECK(scaled_cols == B * passes);
  // Downstream sees it: the logits move.
  double moved = 0;
  for (int n = 0; n < B * P * V; ++n) moved = std::max(moved, std::fabs(scaled.logits()[n] - plain.logits()[n]));
  CHECK(moved > 1e-6);
}

TEST_CASE("RMSNorm takes the scale of position 0 out of the next block's input, up to its epsilon", "[sim][p0scale]") {
  const Variant v = GENERATE(Variant::causal, Variant::bos);
  const double alpha = GENERATE(0.25, 4.0, 64.0);
  CAPTURE(name(v), alpha);
  const ModelConfig mc = small_model(v);
  REQUIRE(mc.norm == Norm::rms);
  const int B = 2, P = mc.positions(), C = mc.d_model, layer = 0;
  const auto rows = some_rows(B, mc.seq_len, mc.vocab);
  Model<double> plain(mc, B), scaled(mc, B);
  plain.init(9);
  scaled.init(9);
  // Embeddings of norm about 2 (coordinates ~ N(0, 0.5^2)), as a trained model's states are, so the
  // norm's epsilon is small against mean(x^2).
  for (Model<double>* model : {&plain, &scaled}) {
    const TensorInfo& emb = model->tensor("tok_emb");
    model->params().segment(emb.offset, emb.size) *= 25.0;
  }
  scale_and_forward(plain, scaled, layer, alpha, rows, B);
  // y = x g / sqrt(mean(x^2) + eps): with x -> alpha x, y -> y alpha sqrt(m + eps) / sqrt(alpha^2 m + eps),
  // which is y itself as eps / m -> 0.
  const auto& y_plain = plain.activation_views().blocks[layer + 1].norm1.out;    // (C,N)
  const auto& y_scaled = scaled.activation_views().blocks[layer + 1].norm1.out;  // (C,N)
  const double eps = p0sim::sim::layers::norm_eps;
  for (int b = 0; b < B; ++b) {
    const int col = b * P;  // position 0 of row b
    double m = 0;
    for (int i = 0; i < C; ++i) m += plain.hidden(layer + 1)[col * C + i] * plain.hidden(layer + 1)[col * C + i];
    m /= C;
    const double ratio = alpha * std::sqrt(m + eps) / std::sqrt(alpha * alpha * m + eps);
    CAPTURE(m, ratio);
    for (int i = 0; i < C; ++i)
      REQUIRE_THAT(y_scaled(i, col), Catch::Matchers::WithinRel(ratio * y_plain(i, col), 1e-12));
    // Far from alpha itself: the norm removed the scale but for epsilon's share.
    CHECK(std::fabs(std::log(ratio)) < 1e-3);
  }
}

TEST_CASE("without a norm the next block reads position 0's scale: its normalised input scales with the factor",
          "[sim][p0scale]") {
  const double alpha = GENERATE(0.25, 4.0, 64.0);
  CAPTURE(alpha);
  ModelConfig mc = small_model(Variant::causal);
  mc.norm = Norm::none;
  const int B = 2, P = mc.positions(), C = mc.d_model, layer = 0;
  const auto rows = some_rows(B, mc.seq_len, mc.vocab);
  Model<double> plain(mc, B), scaled(mc, B);
  plain.init(9);
  scaled.init(9);
  scale_and_forward(plain, scaled, layer, alpha, rows, B);
  // y = g x, so the keys and queries block 1 computes from position 0 carry the factor (unlike RMSNorm).
  const auto& y_plain = plain.activation_views().blocks[layer + 1].norm1.out;    // (C,N)
  const auto& y_scaled = scaled.activation_views().blocks[layer + 1].norm1.out;  // (C,N)
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < C; ++i)
      REQUIRE_THAT(y_scaled(i, b * P), Catch::Matchers::WithinRel(alpha * y_plain(i, b * P), 1e-15));
}

TEST_CASE("a position-0 scale refuses a backward, rejects bad arguments, and clearing it restores the model",
          "[sim][p0scale]") {
  const ModelConfig mc = small_model(Variant::causal);
  const int B = 2;
  const auto rows = some_rows(B, mc.seq_len, mc.vocab);
  Model<float> m(mc, B), intact(mc, B);
  m.init(3);
  intact.init(3);
  m.set_position0_scale(1, 8.0f);
  const float scaled_loss = m.forward(rows.data(), B);
  CHECK_THROWS_AS(m.backward(), std::logic_error);  // evaluation only
  CHECK_THROWS_AS(m.set_position0_scale(3, 2.0f), std::out_of_range);
  CHECK_THROWS_AS(m.set_position0_scale(-1, 2.0f), std::out_of_range);
  CHECK_THROWS_AS(m.set_position0_scale(0, std::nanf("")), std::invalid_argument);
  CHECK_THROWS_AS(m.set_position0_scale(0, INFINITY), std::invalid_argument);
  m.clear_position0_scale();
  const float cleared = m.forward(rows.data(), B), reference = intact.forward(rows.data(), B);
  CHECK(cleared == reference);
  CHECK(scaled_loss != reference);  // the scale did act
  const std::size_t n = static_cast<std::size_t>(B) * mc.positions() * mc.vocab;
  CHECK(copy(m.logits(), n) == copy(intact.logits(), n));
  m.zero_grad();
  CHECK_NOTHROW(m.backward());
}

}  // namespace sim_position0_scale_test
