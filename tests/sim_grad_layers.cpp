// Every layer's backward against central finite differences in double, through the scalar probe
// loss sum(R * out) with a fixed random R, so dout = R.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

#include "sim/layers.hpp"
#include "tests/sim_grad_check.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_grad_layers_test {

using namespace p0sim::sim;
using namespace p0sim::sim::layers;
using p0sim::PhiloxStream;
using p0sim::test::all_indices;
using p0sim::test::fd_error;
using p0sim::test::fill_normal;
using Buf = std::vector<double>;

namespace {

constexpr double tol = 1e-6;

double dot(const Buf& a, const Buf& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
Buf normal(std::size_t n, double sigma, PhiloxStream& rng, double mean = 0.0) {
  Buf b(n);
  fill_normal(b.data(), static_cast<Index>(n), sigma, rng, mean);
  return b;
}
double err(Buf& x, const Buf& g, const std::function<double()>& loss) {
  return fd_error(x.data(), g.data(), all_indices(static_cast<Index>(x.size())), loss);
}

}  // namespace

TEST_CASE("norm backward matches finite differences", "[sim][grad]") {
  const auto kind = GENERATE(Norm::rms, Norm::layer, Norm::none);
  CAPTURE(static_cast<int>(kind));
  const Index N = 5, C = 7;
  PhiloxStream rng(11, 0);
  Buf x = normal(N * C, 1.0, rng, 0.3), w = normal(C, 0.3, rng, 1.0), b = normal(C, 0.3, rng),
      R = normal(N * C, 1.0, rng);
  Buf y(N * C), mean(N), rstd(N);
  const double* bias = kind == Norm::layer ? b.data() : nullptr;
  auto loss = [&] {
    norm_forward(y.data(), mean.data(), rstd.data(), x.data(), w.data(), bias, N, C, kind);
    return dot(y, R);
  };
  loss();
  Buf dx(N * C, 0.0), dw(C, 0.0), db(C, 0.0);
  norm_backward(dx.data(), dw.data(), kind == Norm::layer ? db.data() : nullptr, R.data(), x.data(), mean.data(),
                rstd.data(), w.data(), N, C, kind);
  CHECK(err(x, dx, loss) < tol);
  CHECK(err(w, dw, loss) < tol);
  if (kind == Norm::layer) CHECK(err(b, db, loss) < tol);
}

TEST_CASE("GEMM on pre-sized space equals Eigen's product for every transpose, also when under-reserved",
          "[sim][grad]") {
  PhiloxStream rng(10, 0);
  const Index m = 70, n = 90, k = 300;
  Mat<double> A = Mat<double>::Zero(m, k), B = Mat<double>::Zero(k, n), C0 = Mat<double>::Zero(m, n);
  for (Index i = 0; i < A.size(); ++i) A.data()[i] = rng.normal();
  for (Index i = 0; i < B.size(); ++i) B.data()[i] = rng.normal();
  for (Index i = 0; i < C0.size(); ++i) C0.data()[i] = rng.normal();
  const Mat<double> At = A.transpose(), Bt = B.transpose();
  const bool small = GENERATE(false, true);
  GemmSpace<double> ws;
  if (small)
    ws.reserve(8, 8, 8);  // forces smaller blocks than Eigen would pick
  else
    ws.reserve(m, n, k);
  Mat<double> C = C0;
  gemm<double, false, false>(m, n, k, 0.5, A.data(), m, B.data(), k, true, C.data(), m, ws);
  CHECK((C - (C0 + 0.5 * A * B)).norm() < 1e-12 * C.norm());
  gemm<double, true, false>(m, n, k, 1.0, At.data(), k, B.data(), k, false, C.data(), m, ws);
  CHECK((C - A * B).norm() < 1e-12 * C.norm());
  gemm<double, false, true>(m, n, k, 1.0, A.data(), m, Bt.data(), n, false, C.data(), m, ws);
  CHECK((C - A * B).norm() < 1e-12 * C.norm());
  gemm<double, true, true>(m, n, k, 1.0, At.data(), k, Bt.data(), n, false, C.data(), m, ws);
  CHECK((C - A * B).norm() < 1e-12 * C.norm());
}

TEST_CASE("linear backward matches finite differences and accumulates", "[sim][grad]") {
  const Index N = 6, I = 5, O = 4;
  PhiloxStream rng(12, 0);
  Buf x = normal(N * I, 1.0, rng), W = normal(O * I, 0.5, rng), R = normal(N * O, 1.0, rng);
  Buf y(N * O);
  GemmSpace<double> ws;
  matmul_reserve(ws, N, I, O);
  auto loss = [&] {
    matmul_forward(y.data(), x.data(), W.data(), N, I, O, false, ws);
    return dot(y, R);
  };
  loss();
  // y[n,o] = sum_i x[n,i] W[o,i] (row-major (O,I) weight): check one entry by hand
  double y01 = 0;
  for (Index i = 0; i < I; ++i) y01 += x[0 * I + i] * W[1 * I + i];
  CHECK_THAT(y[0 * O + 1], Catch::Matchers::WithinAbs(y01, 1e-12));
  Buf dx(N * I, 0.0), dW(O * I, 0.0);
  matmul_backward(dx.data(), dW.data(), R.data(), x.data(), W.data(), N, I, O, ws);
  CHECK(err(x, dx, loss) < tol);
  CHECK(err(W, dW, loss) < tol);
  // a second backward adds the same gradient again
  Buf dW1 = dW;
  matmul_backward(dx.data(), dW.data(), R.data(), x.data(), W.data(), N, I, O, ws);
  for (std::size_t i = 0; i < dW.size(); ++i) CHECK_THAT(dW[i], Catch::Matchers::WithinAbs(2 * dW1[i], 1e-12));
}

TEST_CASE("rope backward matches finite differences and rotates NeoX pairs", "[sim][grad]") {
  const Index N = 4, C = 8, H = 2, D = C / H, P = 4;
  PhiloxStream rng(13, 0);
  std::vector<std::int32_t> pos = {0, 3, 1, 2};
  Buf cs(P * D / 2), sn(P * D / 2);
  rope_table(cs.data(), sn.data(), P, D);
  Buf x = normal(N * 3 * C, 1.0, rng), R = normal(N * 3 * C, 1.0, rng), y(N * 3 * C);
  auto loss = [&] {
    y = x;
    rope_forward(y.data(), pos.data(), cs.data(), sn.data(), N, C, H);
    return dot(y, R);
  };
  loss();
  // column 1 at t=3, head 1 of k, pair i=1: angle 3 * 10000^(-2/4) = 0.03
  {
    const Index base = 1 * 3 * C + C + 1 * D;
    const double a = x[base + 1], b = x[base + 1 + D / 2], th = 3 * std::pow(10000.0, -0.5);
    CHECK_THAT(y[base + 1], Catch::Matchers::WithinAbs(a * std::cos(th) - b * std::sin(th), 1e-12));
    CHECK_THAT(y[base + 1 + D / 2], Catch::Matchers::WithinAbs(a * std::sin(th) + b * std::cos(th), 1e-12));
    // v is not rotated
    CHECK(y[1 * 3 * C + 2 * C + 1] == x[1 * 3 * C + 2 * C + 1]);
  }
  Buf dx = R;
  rope_backward(dx.data(), pos.data(), cs.data(), sn.data(), N, C, H);
  CHECK(err(x, dx, loss) < tol);
}

TEST_CASE("attention backward matches finite differences for every mask and attention function", "[sim][grad]") {
  const auto mask = GENERATE(MaskKind::causal, MaskKind::full);
  const auto attn = GENERATE(Attn::softmax, Attn::softmax1, Attn::sigmoid, Attn::relu);
  const bool packed = GENERATE(false, true);  // equal sequences, or packed prefixes of lengths 1,2,3,4
  // Tiny heads and lengths, and the fused kernel's full-width path: head dims 16 and 32 (whole
  // 16-lane chunks) with lengths that are not multiples of its 4-query blocks.
  const auto shape =
      GENERATE(std::make_tuple(Index{6}, Index{2}, std::vector<Index>{1, 2, 3, 4}, std::vector<Index>{4, 4}),
               std::make_tuple(Index{32}, Index{2}, std::vector<Index>{1, 17, 33}, std::vector<Index>{17, 17}),
               std::make_tuple(Index{64}, Index{2}, std::vector<Index>{5, 19}, std::vector<Index>{21, 33}));
  const Index C = std::get<0>(shape), H = std::get<1>(shape);
  CAPTURE(static_cast<int>(mask), static_cast<int>(attn), packed, C, H);
  std::vector<Sequence> seqs;
  Index N = 0, A = 0;
  Index longest = 0;
  for (Index len : packed ? std::get<2>(shape) : std::get<3>(shape)) {
    longest = std::max(longest, len);
    seqs.push_back({N, len, A});
    N += len;
    A += H * len * len;
  }
  PhiloxStream rng(14, 0);
  Buf qkv = normal(N * 3 * C, 1.0, rng), R = normal(N * C, 1.0, rng), y(N * C), att(A);
  GemmSpace<double> ws;
  attention_reserve(ws, longest, C / H);
  auto loss = [&] {
    attention_forward(y.data(), att.data(), qkv.data(), seqs.data(), static_cast<Index>(seqs.size()), C, H, mask, attn,
                      ws);
    return dot(y, R);
  };
  loss();
  // masked probabilities are exactly 0; softmax rows sum to 1, softmax1 rows to less than 1
  for (const auto& s : seqs)
    for (Index h = 0; h < H; ++h)
      for (Index t = 0; t < s.len; ++t) {
        double row = 0;
        for (Index k = 0; k < s.len; ++k) {
          const double a = att[s.att_offset + h * s.len * s.len + t * s.len + k];
          if (mask == MaskKind::causal && k > t) CHECK(a == 0.0);
          row += a;
        }
        if (attn == Attn::softmax) CHECK_THAT(row, Catch::Matchers::WithinAbs(1.0, 1e-12));
        if (attn == Attn::softmax1) CHECK(row < 1.0);
      }
  if (attn == Attn::relu) {
    // Guo et al.'s form, from q and k directly: relu(q_t.k_j / sqrt(D)) / (keys query t sees)
    const Index D = C / H;
    for (const auto& s : seqs)
      for (Index h = 0; h < H; ++h)
        for (Index t = 0; t < s.len; ++t) {
          const Index seen = mask == MaskKind::causal ? t + 1 : s.len;
          for (Index k = 0; k < seen; ++k) {
            double score = 0;
            for (Index d = 0; d < D; ++d)
              score += qkv[(s.offset + t) * 3 * C + h * D + d] * qkv[(s.offset + k) * 3 * C + C + h * D + d];
            const double expected =
                std::max(score / std::sqrt(static_cast<double>(D)), 0.0) / static_cast<double>(seen);
            CHECK_THAT(att[s.att_offset + h * s.len * s.len + t * s.len + k],
                       Catch::Matchers::WithinAbs(expected, 1e-12));
          }
        }
  }
  Buf dqkv(N * 3 * C, 0.0);
  attention_backward(dqkv.data(), R.data(), att.data(), qkv.data(), seqs.data(), static_cast<Index>(seqs.size()), C, H,
                     mask, attn, ws);
  // Every coordinate for the tiny shape; 600 random ones for the wide shapes keeps this fast.
  const auto idx = C <= 6 ? all_indices(N * 3 * C) : p0sim::test::sample_indices(N * 3 * C, 600, rng);
  CHECK(fd_error(qkv.data(), dqkv.data(), idx, loss) < tol);
}

TEST_CASE("attention's weighted sums give the same bits whichever vector width the head dimension selects",
          "[sim][attention]") {
  // mix picks a vector width from the head dimension D; every path must add the terms of each output
  // element in index order with the same operations as the plain scalar loop below, compiled with
  // the same flags (g++ contracts a*b+c into one fused multiply-add in both, at -O2 and above where
  // the target has FMA, or in neither). So the result must equal that loop bit for bit, whatever D:
  // the width changes speed, never the bits of a run.
  const Index D = GENERATE(Index{3}, Index{8}, Index{13}, Index{16}, Index{24}, Index{29}, Index{40});
  const bool by_column = GENERATE(false, true);  // weights read along rows (forward) or columns (dk, dv)
  CAPTURE(D, by_column);
  constexpr int NB = 4;
  const Index n = 11, ldy = D + 5, ldo = D + 3, lo = 2, hi = n;
  PhiloxStream rng(21, 0);
  // w is an (n,n) score block read along rows (wi = n, wj = 1) or along columns (wi = 1, wj = n).
  std::vector<float> w(n * n), Y(n * ldy), out(NB * ldo, -1.0f), want(NB * ldo, -1.0f);
  for (auto& x : w) x = static_cast<float>(rng.normal());
  for (auto& x : Y) x = static_cast<float>(rng.normal());
  const Index wi = by_column ? 1 : n, wj = by_column ? n : 1;
  const float alpha = 0.37f;
  mix<float, NB>(out.data(), ldo, w.data(), wi, wj, Y.data(), ldy, lo, hi, D, alpha);
  for (int i = 0; i < NB; ++i)
    for (Index d = 0; d < D; ++d) {
      float acc = 0.0f;
      for (Index j = lo; j < hi; ++j) acc += w[i * wi + j * wj] * Y[j * ldy + d];
      want[i * ldo + d] = alpha * acc;
    }
  CHECK(std::equal(out.begin(), out.end(), want.begin(),
                   [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }));
}

// The backward as it was written first: dS for the whole (n,n) block, then dk and dv as sums down
// its columns by mix. Kept here as the reference for the order of every addition.
void column_pass_backward(float* dqkv, const float* dout, const float* att, const float* qkv, const Sequence& seq,
                          Index C, Index H, MaskKind mask, Attn attn, GemmSpace<float>& ws) {
  const Index D = C / H, ld = 3 * C, o = seq.offset, n = seq.len, np = round_up(n, kLane);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const bool causal = mask == MaskKind::causal;
  std::vector<float> dSfull(n * n);
  for (Index h = 0; h < H; ++h) {
    const float *q = qkv + o * ld + h * D, *k = q + C, *v = q + 2 * C;
    float *dq = dqkv + o * ld + h * D, *dk = dq + C, *dv = dq + 2 * C;
    const float* dy = dout + o * C + h * D;
    const float* A = att + seq.att_offset + h * n * n;
    float* dS = dSfull.data();
    float* vT = ws.work();
    float* rows = vT + D * np;
    transpose_panel(vT, v, ld, D, n, np);
    for (Index t0 = 0; t0 < n; t0 += kBlock) {
      const int nb = static_cast<int>(std::min<Index>(kBlock, n - t0));
      const Index kend = causal ? t0 + nb : n;
      with_block(nb, [&](auto NB) {
        dot_rows<float, decltype(NB)::value>(rows, np, dy + t0 * C, C, vT, np, D, round_up(kend, kLane), 1.0f);
      });
      for (int i = 0; i < nb; ++i) {
        const Index t = t0 + i, kmax = causal ? t + 1 : n;
        const auto a = Eigen::Map<const Vec<float>>(A + t * n, kmax).array();
        const auto d = Eigen::Map<const Vec<float>>(rows + i * np, kmax).array();
        auto ds = Eigen::Map<Vec<float>>(dS + t * n, kmax).array();
        if (attn == Attn::sigmoid)
          ds = d * a * (1.0f - a);
        else if (attn == Attn::relu)
          ds = (a > 0.0f).select(d / static_cast<float>(kmax), 0.0f);
        else
          ds = a * (d - (a * d).sum());
        std::fill(dS + t * n + kmax, dS + (t + 1) * n, 0.0f);
      }
      with_block(nb, [&](auto NB) {
        mix<float, decltype(NB)::value>(dq + t0 * ld, ld, dS + t0 * n, n, 1, k, ld, 0, kend, D, scale);
      });
    }
    for (Index j0 = 0; j0 < n; j0 += kBlock) {
      const int nb = static_cast<int>(std::min<Index>(kBlock, n - j0));
      const Index tbeg = causal ? j0 : 0;
      with_block(nb, [&](auto NB) {
        mix<float, decltype(NB)::value>(dk + j0 * ld, ld, dS + j0, 1, n, q, ld, tbeg, n, D, scale);
        mix<float, decltype(NB)::value>(dv + j0 * ld, ld, A + j0, 1, n, dy, C, tbeg, n, D, 1.0f);
      });
    }
  }
}

TEST_CASE("attention backward in one pass over query blocks gives the column pass's bits", "[sim][attention]") {
  // The one-pass backward gathers dk and dv key by key across query blocks; each sum must add the
  // same terms in the same order as the sum down a column, so the bits of every run stay.
  const auto mask = GENERATE(MaskKind::causal, MaskKind::full);
  const auto attn = GENERATE(Attn::softmax, Attn::softmax1, Attn::sigmoid, Attn::relu);
  const auto shape =
      GENERATE(std::make_tuple(Index{8}, Index{1}, Index{5}), std::make_tuple(Index{64}, Index{4}, Index{37}),
               std::make_tuple(Index{96}, Index{2}, Index{64}), std::make_tuple(Index{58}, Index{2}, Index{19}));
  const Index C = std::get<0>(shape), H = std::get<1>(shape), n = std::get<2>(shape);
  CAPTURE(static_cast<int>(mask), static_cast<int>(attn), C, H, n);
  const Sequence seq{0, n, 0};
  PhiloxStream rng(22, 0);
  std::vector<float> qkv(n * 3 * C), dout(n * C), y(n * C), att(H * n * n);
  for (auto& x : qkv) x = static_cast<float>(rng.normal());
  for (auto& x : dout) x = static_cast<float>(rng.normal());
  GemmSpace<float> ws;
  attention_reserve(ws, n, C / H);
  attention_forward(y.data(), att.data(), qkv.data(), &seq, 1, C, H, mask, attn, ws);
  std::vector<float> got(n * 3 * C, -7.0f), want(n * 3 * C, -7.0f);
  attention_backward(got.data(), dout.data(), att.data(), qkv.data(), &seq, 1, C, H, mask, attn, ws);
  column_pass_backward(want.data(), dout.data(), att.data(), qkv.data(), seq, C, H, mask, attn, ws);
  CHECK(std::equal(got.begin(), got.end(), want.begin(),
                   [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }));
}

TEST_CASE("activation backward matches finite differences", "[sim][grad]") {
  const auto kind = GENERATE(Act::gelu, Act::relu);
  CAPTURE(static_cast<int>(kind));
  PhiloxStream rng(15, 0);
  const Index M = 40;
  Buf x = normal(M, 1.5, rng), R = normal(M, 1.0, rng), y(M);
  if (kind == Act::relu)  // keep central differences off the kink
    for (double& v : x)
      if (std::abs(v) < 1e-3) v = 0.5;
  auto loss = [&] {
    act_forward(y.data(), x.data(), M, kind);
    return dot(y, R);
  };
  loss();
  if (kind == Act::gelu) {  // tanh approximation at x = 1: 0.841191990607...
    Buf one = {1.0}, out = {0.0};
    act_forward(out.data(), one.data(), 1, kind);
    CHECK_THAT(out[0], Catch::Matchers::WithinAbs(0.5 * (1 + std::tanh(std::sqrt(2 / M_PI) * 1.044715)), 1e-15));
  }
  Buf dx = R;
  act_backward_inplace(dx.data(), x.data(), M, kind);
  CHECK(err(x, dx, loss) < tol);
}

TEST_CASE("cross-entropy backward matches finite differences and skips unscored columns", "[sim][grad]") {
  const Index N = 5, V = 7;
  PhiloxStream rng(16, 0);
  std::vector<std::int32_t> targets = {3, -1, 0, 6, -1};
  Buf z = normal(N * V, 2.0, rng), p(N * V);
  auto loss = [&] { return crossentropy_forward(p.data(), z.data(), targets.data(), N, V) / 3.0; };
  loss();
  Buf dz(N * V, 0.0);
  crossentropy_backward(dz.data(), p.data(), targets.data(), N, V, 1.0 / 3.0);
  CHECK(err(z, dz, loss) < tol);
  for (Index v = 0; v < V; ++v) CHECK(dz[1 * V + v] == 0.0);
}

TEST_CASE("embedding backward matches finite differences", "[sim][grad]") {
  const Index N = 6, C = 4, V = 5, P = 3;
  PhiloxStream rng(17, 0);
  std::vector<std::int32_t> tok = {1, 4, 1, 0, 2, 2}, pos = {0, 1, 2, 0, 1, 2};
  Buf te = normal(V * C, 1.0, rng), pe = normal(P * C, 1.0, rng), R = normal(N * C, 1.0, rng), x(N * C);
  auto loss = [&] {
    encoder_forward(x.data(), tok.data(), pos.data(), te.data(), pe.data(), N, C);
    return dot(x, R);
  };
  loss();
  Buf dte(V * C, 0.0), dpe(P * C, 0.0);
  encoder_backward(dte.data(), dpe.data(), R.data(), tok.data(), pos.data(), N, C);
  CHECK(err(te, dte, loss) < tol);
  CHECK(err(pe, dpe, loss) < tol);
  for (Index c = 0; c < C; ++c) CHECK(dte[3 * C + c] == 0.0);  // token 3 never appears
}

}  // namespace sim_grad_layers_test
