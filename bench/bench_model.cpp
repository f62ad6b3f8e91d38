// Speed of the model engine, single-threaded, float.
//   BM_eigen_sgemm      the machine's limit: a large Eigen float GEMM (1024^3), the denominator.
//   BM_train_step       forward + zero_grad + backward + AdamW step, args (C,H,T,B), V=64, L=2, F=4C.
//   BM_<layer>_<fwd|bwd> each layer alone at the middle config's shapes (N = B*T = 1024 tokens).
// FLOP count of a training step (documented so the GFLOP/s figure can be checked):
//   matmuls: 6 * (L*(4C^2 + 2CF) + VC) * B*P   (2 for forward, 4 for the two backward products)
//   attention: 12 * B*L*P^2*C                 (q.k and A.v, 2 flops per multiply-add, forward 2 and
//                                              backward 4 products of P*P*D per head; the full
//                                              P x P square is computed even under the causal mask)
//   norms, activations, softmax, cross-entropy and AdamW are not counted.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "common/rng.hpp"
#include "sim/layers.hpp"
#include "sim/model.hpp"

using namespace p0sim::sim;
using Eigen::Index;

namespace {

double step_flops(const ModelConfig& c, int B) {
  const double C = c.d_model, F = c.d_ff, V = c.vocab, L = c.layers, P = c.positions();
  return 6.0 * (L * (4 * C * C + 2 * C * F) + V * C) * B * P + 12.0 * B * L * P * P * C;
}

std::vector<float> normal_buffer(Index n, std::uint64_t seed) {
  p0sim::PhiloxStream rng(seed, 0);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<float>(rng.normal());
  return v;
}

void BM_eigen_sgemm(benchmark::State& state) {
  const Index n = state.range(0);
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_eigen_sgemm)->ArgName("n")->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_train_step(benchmark::State& state) {
  ModelConfig c;
  c.vocab = 64;
  c.d_model = static_cast<int>(state.range(0));
  c.heads = static_cast<int>(state.range(1));
  c.seq_len = static_cast<int>(state.range(2));
  c.d_ff = 4 * c.d_model;
  c.layers = 2;
  const int B = static_cast<int>(state.range(3));
  Model<float> m(c, B);
  m.init(1);
  AdamW<float> opt(m.layout(), AdamWConfig{});
  p0sim::PhiloxStream rng(2, 0);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B * (c.seq_len + 1)));
  for (auto& r : rows) r = static_cast<std::int32_t>(rng.below(64));
  // validate once before timing: an untrained model's loss is ~ln V
  const float first = m.forward(rows.data(), B);
  if (std::abs(first - std::log(64.0f)) > 0.1f) throw std::runtime_error("BM_train_step: untrained loss far from ln V");
  for (auto _ : state) {
    const float loss = m.forward(rows.data(), B);
    m.zero_grad();
    m.backward();
    opt.step(m.params(), m.grads(), 1e-3);
    benchmark::DoNotOptimize(loss);
  }
  using benchmark::Counter;
  state.counters["tokens_per_s"] = Counter(double(B) * c.positions(), Counter::kIsIterationInvariantRate);
  state.counters["steps_per_s"] = Counter(1.0, Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] = Counter(step_flops(c, B) * 1e-9, Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_train_step)
    ->ArgNames({"C", "H", "T", "B"})
    ->Args({32, 2, 16, 16})
    ->Args({64, 4, 32, 32})
    ->Args({128, 4, 64, 32})
    ->Unit(benchmark::kMillisecond);

// ---- layers at the middle config: N = 1024 tokens (B=32, T=32), C = 64, H = 4, F = 256 --------------
constexpr Index kN = 1024, kC = 64, kH = 4, kF = 256, kP = 32;

void BM_matmul_fwd(benchmark::State& state) {
  const Index I = state.range(0), O = state.range(1);
  auto x = normal_buffer(kN * I, 1), w = normal_buffer(O * I, 2), y = normal_buffer(kN * O, 3);
  layers::GemmSpace<float> ws;
  layers::matmul_reserve(ws, kN, I, O);
  for (auto _ : state) {
    layers::matmul_forward(y.data(), x.data(), w.data(), kN, I, O, false, ws);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kN * I * O * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
void BM_matmul_bwd(benchmark::State& state) {
  const Index I = state.range(0), O = state.range(1);
  auto x = normal_buffer(kN * I, 1), w = normal_buffer(O * I, 2), dy = normal_buffer(kN * O, 3);
  std::vector<float> dx(static_cast<std::size_t>(kN * I)), dw(static_cast<std::size_t>(O * I));
  layers::GemmSpace<float> ws;
  layers::matmul_reserve(ws, kN, I, O);
  for (auto _ : state) {
    layers::matmul_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), kN, I, O, ws);
    benchmark::DoNotOptimize(dx.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(4.0 * kN * I * O * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_matmul_fwd)->ArgNames({"I", "O"})->Args({kC, 3 * kC})->Args({kC, kF})->Args({kF, kC})->Args({kC, 64});
BENCHMARK(BM_matmul_bwd)->ArgNames({"I", "O"})->Args({kC, 3 * kC})->Args({kC, kF})->Args({kF, kC})->Args({kC, 64});

struct AttentionSetup {
  std::vector<layers::Sequence> seqs;
  std::vector<float> qkv, out, att, dout, dqkv, scratch;
  layers::GemmSpace<float> ws;
  AttentionSetup() {
    for (Index s = 0; s < kN / kP; ++s) seqs.push_back({s * kP, kP, s * kH * kP * kP});
    qkv = normal_buffer(kN * 3 * kC, 1);
    dout = normal_buffer(kN * kC, 2);
    out.resize(static_cast<std::size_t>(kN * kC));
    att.resize(static_cast<std::size_t>(kN * kH * kP));
    dqkv.resize(static_cast<std::size_t>(kN * 3 * kC));
    scratch.resize(static_cast<std::size_t>(kP * kP));
    layers::attention_reserve(ws, kP, kC / kH);
  }
  void forward(layers::AttnKind a) {
    layers::attention_forward(out.data(), att.data(), qkv.data(), seqs.data(), Index(seqs.size()), kC, kH,
                              layers::MaskKind::causal, a, ws);
  }
};
void BM_attention_fwd(benchmark::State& state) {
  AttentionSetup s;
  const auto a = static_cast<layers::AttnKind>(state.range(0));
  for (auto _ : state) {
    s.forward(a);
    benchmark::DoNotOptimize(s.out.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(4.0 * kN * kP * kC * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
void BM_attention_bwd(benchmark::State& state) {
  AttentionSetup s;
  const auto a = static_cast<layers::AttnKind>(state.range(0));
  s.forward(a);
  for (auto _ : state) {
    layers::attention_backward(s.dqkv.data(), s.scratch.data(), s.dout.data(), s.att.data(), s.qkv.data(),
                               s.seqs.data(), Index(s.seqs.size()), kC, kH, layers::MaskKind::causal, a, s.ws);
    benchmark::DoNotOptimize(s.dqkv.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(8.0 * kN * kP * kC * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
// arg: 0 softmax, 1 softmax1, 2 sigmoid
BENCHMARK(BM_attention_fwd)->ArgName("attn")->DenseRange(0, 2);
BENCHMARK(BM_attention_bwd)->ArgName("attn")->DenseRange(0, 2);

void BM_norm_fwd(benchmark::State& state) {
  const auto kind = static_cast<layers::NormKind>(state.range(0));
  auto x = normal_buffer(kN * kC, 1), g = normal_buffer(kC, 2), b = normal_buffer(kC, 3);
  std::vector<float> y(static_cast<std::size_t>(kN * kC)), mean(kN), rstd(kN);
  for (auto _ : state) {
    layers::norm_forward(y.data(), mean.data(), rstd.data(), x.data(), g.data(), b.data(), kN, kC, kind);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["tokens_per_s"] = benchmark::Counter(double(kN), benchmark::Counter::kIsIterationInvariantRate);
}
void BM_norm_bwd(benchmark::State& state) {
  const auto kind = static_cast<layers::NormKind>(state.range(0));
  auto x = normal_buffer(kN * kC, 1), g = normal_buffer(kC, 2), b = normal_buffer(kC, 3), dy = normal_buffer(kN * kC, 4);
  std::vector<float> y(static_cast<std::size_t>(kN * kC)), mean(kN), rstd(kN), dx(static_cast<std::size_t>(kN * kC)),
      dg(kC), db(kC);
  layers::norm_forward(y.data(), mean.data(), rstd.data(), x.data(), g.data(), b.data(), kN, kC, kind);
  for (auto _ : state) {
    layers::norm_backward(dx.data(), dg.data(), db.data(), dy.data(), x.data(), mean.data(), rstd.data(), g.data(), kN,
                          kC, kind);
    benchmark::DoNotOptimize(dx.data());
  }
  state.counters["tokens_per_s"] = benchmark::Counter(double(kN), benchmark::Counter::kIsIterationInvariantRate);
}
// arg: 0 rms, 1 layer
BENCHMARK(BM_norm_fwd)->ArgName("norm")->DenseRange(0, 1);
BENCHMARK(BM_norm_bwd)->ArgName("norm")->DenseRange(0, 1);

void BM_act_fwd(benchmark::State& state) {
  const auto kind = static_cast<layers::ActKind>(state.range(0));
  auto x = normal_buffer(kN * kF, 1);
  std::vector<float> y(static_cast<std::size_t>(kN * kF));
  for (auto _ : state) {
    layers::act_forward(y.data(), x.data(), kN * kF, kind);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["values_per_s"] = benchmark::Counter(double(kN * kF), benchmark::Counter::kIsIterationInvariantRate);
}
void BM_act_bwd(benchmark::State& state) {
  const auto kind = static_cast<layers::ActKind>(state.range(0));
  auto x = normal_buffer(kN * kF, 1), d = normal_buffer(kN * kF, 2);
  for (auto _ : state) {
    layers::act_backward_inplace(d.data(), x.data(), kN * kF, kind);
    benchmark::DoNotOptimize(d.data());
  }
  state.counters["values_per_s"] = benchmark::Counter(double(kN * kF), benchmark::Counter::kIsIterationInvariantRate);
}
// arg: 0 gelu, 1 relu
BENCHMARK(BM_act_fwd)->ArgName("act")->DenseRange(0, 1);
BENCHMARK(BM_act_bwd)->ArgName("act")->DenseRange(0, 1);

void BM_crossentropy_fwd(benchmark::State& state) {
  const Index V = 64;
  auto z = normal_buffer(kN * V, 1);
  std::vector<float> p(static_cast<std::size_t>(kN * V));
  std::vector<std::int32_t> t(kN, 3);
  for (auto _ : state) benchmark::DoNotOptimize(layers::crossentropy_forward(p.data(), z.data(), t.data(), kN, V));
  state.counters["tokens_per_s"] = benchmark::Counter(double(kN), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_crossentropy_fwd);

void BM_adamw_step(benchmark::State& state) {
  ModelConfig c;  // the middle config's parameters
  Model<float> m(c, 1);
  m.init(1);
  AdamW<float> opt(m.layout(), AdamWConfig{});
  m.grads().setConstant(1e-3f);
  for (auto _ : state) opt.step(m.params(), m.grads(), 1e-4);
  state.counters["params_per_s"] =
      benchmark::Counter(double(m.params().size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_adamw_step);

}  // namespace
