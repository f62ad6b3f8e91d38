// Speed of the model engine, single-threaded, float.
//   BM_eigen_sgemm      the machine's limit: a large Eigen float GEMM (1024^3), the denominator.
//   BM_train_step       forward + zero_grad + backward + AdamW step, args (C,H,T,B), V=64, L=2, F=4C.
//                       Counter of_sgemm = its GFLOP/s over the best of three 1024^3 Eigen GEMMs timed
//                       (thread CPU time) just before it, so the ratio holds on a shared machine.
//   Statistics: with --benchmark_repetitions, min and max are reported too; on a shared machine the
//   min time (max rate) is the least disturbed figure.
//   BM_<layer>_<fwd|bwd> each layer alone at the middle config's shapes (N = B*T = 1024 tokens).
// FLOP count of a training step (documented so the GFLOP/s figure can be checked):
//   matmuls: 6 * (L*(4C^2 + 2CF) + VC) * B*P   (2 for forward, 4 for the two backward products)
//   attention: 12 * B*L*P^2*C                 (q.k and A.v, 2 flops per multiply-add, forward 2 and
//                                              backward 4 products of P*P*D per head; the full
//                                              P x P square is counted, as nanoGPT's MFU estimate
//                                              does, though under the causal mask the kernels skip
//                                              most of the masked triangle)
//   norms, activations, softmax, cross-entropy and AdamW are not counted.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <ctime>
#include <stdexcept>
#include <vector>

#include "common/rng.hpp"
#include "sim/layers.hpp"
#include "sim/model.hpp"
#include "sim/optimizer.hpp"

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

double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
// The machine's single-thread float GEMM rate right now: best of three 1024^3 products.
double sgemm_gflops() {
  const Index n = 1024;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    const double t0 = thread_seconds();
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    best = std::max(best, 2.0 * n * n * n * 1e-9 / (thread_seconds() - t0));
  }
  return best;
}
double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

void BM_eigen_sgemm(benchmark::State& state) {
  const Index n = state.range(0);
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_eigen_sgemm)
    ->ArgName("n")
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("min", min_of)
    ->ComputeStatistics("max", max_of);

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
  Optimizer<float> opt(m.layout(), OptimizerConfig{});
  p0sim::PhiloxStream rng(2, 0);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B * (c.seq_len + 1)));
  for (auto& r : rows) r = static_cast<std::int32_t>(rng.below(64));
  // validate once before timing: an untrained model's loss is ~ln V
  const float first = m.forward(rows.data(), B);
  if (std::abs(first - std::log(64.0f)) > 0.1f) throw std::runtime_error("BM_train_step: untrained loss far from ln V");
  const double gemm_rate = sgemm_gflops();
  const double t_start = thread_seconds();
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
  const double step_rate =
      step_flops(c, B) * 1e-9 * static_cast<double>(state.iterations()) / std::max(1e-12, thread_seconds() - t_start);
  state.counters["of_sgemm"] = step_rate / gemm_rate;
}
BENCHMARK(BM_train_step)
    ->ArgNames({"C", "H", "T", "B"})
    ->Args({32, 2, 16, 16})
    ->Args({64, 4, 32, 32})
    ->Args({128, 4, 64, 32})
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("min", min_of)
    ->ComputeStatistics("max", max_of);

// ---- layers at the middle config: N = 1024 tokens (B=32, T=32), C = 64, H = 4, F = 256 --------------
constexpr Index kN = 1024, kC = 64, kH = 4, kF = 256, kP = 32;

void BM_matmul_fwd(benchmark::State& state) {
  const Index I = state.range(0), O = state.range(1);
  auto x = normal_buffer(kN * I, 1), w = normal_buffer(O * I, 2), y = normal_buffer(kN * O, 3);
  GemmSpace<float> ws;
  layers::matmul_reserve(ws, kN, I, O);
  for (auto _ : state) {
    layers::matmul_forward(y.data(), x.data(), w.data(), kN, I, O, false, ws);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * kN * I * O * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
void BM_matmul_bwd(benchmark::State& state) {
  const Index I = state.range(0), O = state.range(1);
  auto x = normal_buffer(kN * I, 1), w = normal_buffer(O * I, 2), dy = normal_buffer(kN * O, 3);
  std::vector<float> dx(static_cast<std::size_t>(kN * I)), dw(static_cast<std::size_t>(O * I));
  GemmSpace<float> ws;
  layers::matmul_reserve(ws, kN, I, O);
  for (auto _ : state) {
    layers::matmul_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), kN, I, O, ws);
    benchmark::DoNotOptimize(dx.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(4.0 * kN * I * O * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_matmul_fwd)->ArgNames({"I", "O"})->Args({kC, 3 * kC})->Args({kC, kF})->Args({kF, kC})->Args({kC, 64});
BENCHMARK(BM_matmul_bwd)->ArgNames({"I", "O"})->Args({kC, 3 * kC})->Args({kC, kF})->Args({kF, kC})->Args({kC, 64});

// Reference attention in double, straight from the definition (causal mask), for validation.
void reference_attention(std::vector<double>& out, std::vector<double>& dqkv, const std::vector<float>& qkv,
                         const std::vector<float>& dout, Attn attn, Index N, Index C, Index H, Index P) {
  const Index D = C / H;
  out.assign(static_cast<std::size_t>(N * C), 0.0);
  dqkv.assign(static_cast<std::size_t>(N * 3 * C), 0.0);
  auto at = [&](Index tok, Index part, Index h, Index d) { return double(qkv[tok * 3 * C + part * C + h * D + d]); };
  std::vector<double> a(P), da(P);
  for (Index s0 = 0; s0 < N; s0 += P)
    for (Index h = 0; h < H; ++h)
      for (Index t = 0; t < P; ++t) {
        double m = -INFINITY, sum = 0;
        for (Index j = 0; j <= t; ++j) {
          double dot = 0;
          for (Index d = 0; d < D; ++d) dot += at(s0 + t, 0, h, d) * at(s0 + j, 1, h, d);
          a[j] = dot / std::sqrt(double(D));
          m = std::max(m, a[j]);
        }
        if (attn == Attn::softmax1) m = std::max(m, 0.0);
        for (Index j = 0; j <= t; ++j) {
          a[j] = attn == Attn::sigmoid ? 1 / (1 + std::exp(-a[j])) : std::exp(a[j] - m);
          sum += a[j];
        }
        if (attn == Attn::softmax1) sum += std::exp(-m);
        if (attn != Attn::sigmoid)
          for (Index j = 0; j <= t; ++j) a[j] /= sum;
        double adot = 0;
        for (Index j = 0; j <= t; ++j) {
          da[j] = 0;
          for (Index d = 0; d < D; ++d) {
            out[(s0 + t) * C + h * D + d] += a[j] * at(s0 + j, 2, h, d);
            da[j] += dout[(s0 + t) * C + h * D + d] * at(s0 + j, 2, h, d);
            dqkv[(s0 + j) * 3 * C + 2 * C + h * D + d] += a[j] * dout[(s0 + t) * C + h * D + d];
          }
          adot += a[j] * da[j];
        }
        for (Index j = 0; j <= t; ++j) {
          const double ds = (attn == Attn::sigmoid ? da[j] * (1 - a[j]) : da[j] - adot) * a[j] / std::sqrt(double(D));
          for (Index d = 0; d < D; ++d) {
            dqkv[(s0 + t) * 3 * C + h * D + d] += ds * at(s0 + j, 1, h, d);
            dqkv[(s0 + j) * 3 * C + C + h * D + d] += ds * at(s0 + t, 0, h, d);
          }
        }
      }
}
template <typename A, typename B>
double max_rel_error(const A& got, const B& want) {
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(double(got[i]) - double(want[i])));
    scale = std::max(scale, std::abs(double(want[i])));
  }
  return err / scale;
}

struct AttentionSetup {
  std::vector<layers::Sequence> seqs;
  std::vector<float> qkv, out, att, dout, dqkv;
  GemmSpace<float> ws;
  explicit AttentionSetup(Attn a) {
    for (Index s = 0; s < kN / kP; ++s) seqs.push_back({s * kP, kP, s * kH * kP * kP});
    qkv = normal_buffer(kN * 3 * kC, 1);
    dout = normal_buffer(kN * kC, 2);
    out.resize(static_cast<std::size_t>(kN * kC));
    att.resize(static_cast<std::size_t>(kN * kH * kP));
    dqkv.resize(static_cast<std::size_t>(kN * 3 * kC));
    layers::attention_reserve(ws, kP, kC / kH);
    // validate the fused kernels against the definition once (float vs double: 1e-4 relative)
    std::vector<double> out_ref, dqkv_ref;
    reference_attention(out_ref, dqkv_ref, qkv, dout, a, kN, kC, kH, kP);
    forward(a);
    backward(a);
    if (max_rel_error(out, out_ref) > 1e-4 || max_rel_error(dqkv, dqkv_ref) > 1e-4)
      throw std::runtime_error("AttentionSetup: fused attention disagrees with the reference");
  }
  void forward(Attn a) {
    layers::attention_forward(out.data(), att.data(), qkv.data(), seqs.data(), Index(seqs.size()), kC, kH,
                              layers::MaskKind::causal, a, ws);
  }
  void backward(Attn a) {
    layers::attention_backward(dqkv.data(), dout.data(), att.data(), qkv.data(), seqs.data(), Index(seqs.size()), kC,
                               kH, layers::MaskKind::causal, a, ws);
  }
};
void BM_attention_fwd(benchmark::State& state) {
  const auto a = static_cast<Attn>(state.range(0));
  AttentionSetup s(a);
  for (auto _ : state) {
    s.forward(a);
    benchmark::DoNotOptimize(s.out.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(4.0 * kN * kP * kC * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
void BM_attention_bwd(benchmark::State& state) {
  const auto a = static_cast<Attn>(state.range(0));
  AttentionSetup s(a);
  for (auto _ : state) {
    s.backward(a);
    benchmark::DoNotOptimize(s.dqkv.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(8.0 * kN * kP * kC * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
// arg: 0 softmax, 1 softmax1, 2 sigmoid
BENCHMARK(BM_attention_fwd)->ArgName("attn")->DenseRange(0, 2);
BENCHMARK(BM_attention_bwd)->ArgName("attn")->DenseRange(0, 2);

void BM_norm_fwd(benchmark::State& state) {
  const auto kind = static_cast<Norm>(state.range(0));
  auto x = normal_buffer(kN * kC, 1), g = normal_buffer(kC, 2), b = normal_buffer(kC, 3);
  std::vector<float> y(static_cast<std::size_t>(kN * kC)), mean(kN), rstd(kN);
  for (auto _ : state) {
    layers::norm_forward(y.data(), mean.data(), rstd.data(), x.data(), g.data(), b.data(), kN, kC, kind);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["tokens_per_s"] = benchmark::Counter(double(kN), benchmark::Counter::kIsIterationInvariantRate);
}
void BM_norm_bwd(benchmark::State& state) {
  const auto kind = static_cast<Norm>(state.range(0));
  auto x = normal_buffer(kN * kC, 1), g = normal_buffer(kC, 2), b = normal_buffer(kC, 3),
       dy = normal_buffer(kN * kC, 4);
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
  const auto kind = static_cast<Act>(state.range(0));
  auto x = normal_buffer(kN * kF, 1);
  std::vector<float> y(static_cast<std::size_t>(kN * kF)), g(static_cast<std::size_t>(kN * kF));
  for (auto _ : state) {
    layers::act_forward(y.data(), g.data(), x.data(), kN * kF, kind);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["values_per_s"] = benchmark::Counter(double(kN * kF), benchmark::Counter::kIsIterationInvariantRate);
}
void BM_act_bwd(benchmark::State& state) {
  const auto kind = static_cast<Act>(state.range(0));
  auto x = normal_buffer(kN * kF, 1), d = normal_buffer(kN * kF, 2);
  std::vector<float> y(static_cast<std::size_t>(kN * kF)), g(static_cast<std::size_t>(kN * kF));
  layers::act_forward(y.data(), g.data(), x.data(), kN * kF, kind);
  const std::vector<float> d0 = d;
  for (auto _ : state) {
    // restoring d keeps repeated in-place products away from denormals (the copy is timed too)
    std::copy(d0.begin(), d0.end(), d.begin());
    layers::act_backward_cached(d.data(), g.data(), kN * kF);
    benchmark::DoNotOptimize(d.data());
  }
  state.counters["values_per_s"] = benchmark::Counter(double(kN * kF), benchmark::Counter::kIsIterationInvariantRate);
}
// The model's pair: the forward also writes the derivative, the backward multiplies by it.
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
  Optimizer<float> opt(m.layout(), OptimizerConfig{});
  m.grads().setConstant(1e-3f);
  for (auto _ : state) opt.step(m.params(), m.grads(), 1e-4);
  state.counters["params_per_s"] =
      benchmark::Counter(double(m.params().size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_adamw_step);

}  // namespace
