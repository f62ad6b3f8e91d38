// Speed to emergence.
//   BM_parallel_step  one training step (forward + backward split across threads, AdamW), args
//                     (C,H,T,B,threads,chunks; chunks 0 = the automatic chunk_count), V=64, L=2,
//                     F=4C. Wall time (UseRealTime); CPU time is the whole process's (all
//                     threads), so cpu(2 threads) / cpu(1 thread) is the splitting overhead even
//                     on a machine too loaded to show the wall-time speedup. Counters: chunks,
//                     threads used, GFLOP/s (over wall time).
//   BM_step_gemm_floor the step's linear-layer GEMMs alone (forward and backward, every chunk), args
//                     (C,H,T,B): the lower bound on BM_parallel_step's time with Eigen's GEMM.
//   BM_emergence      trains a firstrecall model from scratch (configs/train_firstrecall.toml:
//                     V=64, H=4, L=2, F=4C, B=64, lr 3e-3, wd 0.1, clip 1, causal, NoPE, no BOS,
//                     4 triggers at q=0.1, probes of 128 rows every 25 steps) over d x T until the
//                     *identification* criterion of sim/probe_trace.hpp holds (probe accuracy at
//                     the trigger queries >= 0.9 and some head's trigger-query attention to key 0
//                     >= 0.5). The high-norm/sink claims do not emerge from scratch within these
//                     budgets, so this is speed to identification emergence. Emergence step = the
//                     first probe step of a run of kConfirm consecutive holding probes (train()'s
//                     analyse_trace asks that it hold to the end of the run; here the run stops
//                     once it has held kConfirm times). Seeds 1..3, one thread, step cap kCap.
//                     Counters (medians over the seeds): steps_to_emergence,
//                     tokens_to_emergence (steps*B*T), seconds_to_emergence (wall time from the
//                     start of training, probes included, to the end of the probe that first
//                     saw the emerged state), cpu_seconds_to_emergence (the same in process CPU
//                     time, steadier on a shared machine), emerged (seeds that emerged within the cap / seeds).
//                     A seed that does not emerge counts as the cap in the medians.
//   BM_circuit        `p0sim theory circuit` at one (d, T) point with the CLI's defaults (256
//                     sequences, 8 models, causal and bidirectional masks on the same weights).
//   Env P0SIM_EMERGE_SEEDS (default 3) and P0SIM_EMERGE_THREADS (default 1) change BM_emergence.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <vector>

#include "sim/data.hpp"
#include "sim/layers.hpp"
#include "sim/model.hpp"
#include "sim/optimizer.hpp"
#include "sim/parallel_step.hpp"
#include "sim/probe_trace.hpp"
#include "sim/train.hpp"
#include "study/circuit.hpp"

using namespace p0sim::sim;

namespace {

constexpr int kCap = 1000;   // step cap per seed
constexpr int kConfirm = 3;  // consecutive holding probes that stop a run
constexpr int kProbeEvery = 25;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::max(1, std::atoi(v)) : fallback;
}

double step_flops(const ModelConfig& c, int B) { return row_flops(c) * B; }

ModelConfig bench_model(int C, int H, int T) {
  ModelConfig m;
  m.vocab = 64;
  m.d_model = C;
  m.heads = H;
  m.layers = 2;
  m.d_ff = 4 * C;
  m.seq_len = T;
  return m;
}

// One training step (ParallelStep forward and backward, AdamW) of model c on B rows.
void time_parallel_step(benchmark::State& state, const ModelConfig& c, int B, int threads, int chunks) {
  Model<float> m(c, B);
  m.init(1);
  Optimizer<float> opt(m.layout(), OptimizerConfig{});
  DataConfig d;
  d.task = Task::firstrecall;
  d.vocab = c.vocab;
  d.seq_len = c.seq_len;
  const DataGenerator gen(d);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B) * gen.row_length());
  gen.fill(0, 0, B, rows.data());
  ParallelStep step(c, B, threads, chunks);
  for (auto _ : state) {
    const double loss = step.forward_backward(m, rows.data());
    benchmark::DoNotOptimize(loss);
    opt.step(m.params(), m.grads(), 1e-4);
  }
  state.counters["chunks"] = step.chunks();
  state.counters["threads_used"] = step.threads();
  state.counters["GFLOP/s"] =
      benchmark::Counter(step_flops(c, B) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_parallel_step(benchmark::State& state) {
  const ModelConfig c =
      bench_model(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), static_cast<int>(state.range(2)));
  time_parallel_step(state, c, static_cast<int>(state.range(3)), static_cast<int>(state.range(4)),
                     static_cast<int>(state.range(5)));
}
// (C,H,T,B,threads,chunks): the 1 -> 2 thread speed-up goal at (C=128,T=64,B=32); the smallest
// config (auto = 1 chunk, and a forced 2-chunk split on 2 threads, the evidence for kMinChunkFlops);
// the default firstrecall config.
BENCHMARK(BM_parallel_step)
    ->ArgNames({"C", "H", "T", "B", "threads", "chunks"})
    ->Args({128, 4, 64, 32, 1, 1})
    ->Args({128, 4, 64, 32, 1, 0})
    ->Args({128, 4, 64, 32, 2, 0})
    ->Args({32, 2, 16, 16, 1, 0})
    ->Args({32, 2, 16, 16, 2, 2})
    ->Args({32, 4, 16, 64, 1, 0})
    ->Args({32, 4, 16, 64, 2, 0})
    ->Args({64, 4, 32, 16, 1, 1})
    ->Args({64, 4, 32, 16, 2, 2})
    ->Args({64, 4, 32, 64, 1, 0})
    ->Args({64, 4, 32, 64, 2, 0})
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

// The natural-text configuration of the science work: byte vocabulary, L=4, C=256, H=8, T=256,
// B=16, on 1 and 2 threads (auto chunks).
void BM_parallel_step_text(benchmark::State& state) {
  ModelConfig c = bench_model(256, 8, 256);
  c.vocab = 256;
  c.layers = 4;
  time_parallel_step(state, c, 16, static_cast<int>(state.range(0)), 0);
}
BENCHMARK(BM_parallel_step_text)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

// The step's GEMMs alone, back to back: for every chunk of ParallelStep's split (the one p0sim
// train uses on any thread count), every linear layer's forward (W x), and backward (dW += x dy^T,
// dx += W^T dy), through sim/gemm.hpp with the same presized packing space, on one thread. No
// attention, norm, activation, loss, embedding, reduction or AdamW: a lower bound on the step's
// time with Eigen's GEMM, whatever the other kernels become. BM_parallel_step at the same args
// (threads 1, chunks 0) is the step itself, so step / floor is the most any non-GEMM work can win.
void BM_step_gemm_floor(benchmark::State& state) {
  namespace ly = p0sim::sim::layers;
  const ModelConfig c =
      bench_model(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), static_cast<int>(state.range(2)));
  const int B = static_cast<int>(state.range(3));
  const std::vector<int> chunk_rows = ParallelStep(c, B, 1).chunk_rows();  // the split p0sim train uses
  const Eigen::Index C = c.d_model, F = c.d_ff, V = c.vocab, T = c.seq_len;
  const Eigen::Index N = chunk_rows.front() * T;  // columns of the largest chunk
  struct Linear {
    Eigen::Index in, out;
  };
  std::vector<Linear> linears;
  for (int l = 0; l < c.layers; ++l) linears.insert(linears.end(), {{C, 3 * C}, {C, C}, {C, F}, {F, C}});
  linears.push_back({C, V});
  GemmSpace<float> ws;
  Eigen::Index most = 0;
  for (const Linear& f : linears) {
    ly::matmul_reserve(ws, N, f.in, f.out);
    most = std::max({most, f.in, f.out});
  }
  Eigen::VectorXf x = Eigen::VectorXf::Constant(most * N, 0.01f), y(most * N), dy = x, dx(most * N);
  Eigen::VectorXf w = Eigen::VectorXf::Constant(most * most, 0.02f), dw(most * most);
  for (auto _ : state) {
    for (const int rows : chunk_rows) {
      const Eigen::Index cols = rows * T;
      for (const Linear& f : linears) ly::matmul_forward(y.data(), x.data(), w.data(), cols, f.in, f.out, false, ws);
      for (const Linear& f : linears)
        ly::matmul_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), cols, f.in, f.out, ws);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::DoNotOptimize(dx.data());
    benchmark::DoNotOptimize(dw.data());
  }
  double gemm_flops = 0.0;
  for (const Linear& f : linears) gemm_flops += 6.0 * static_cast<double>(f.in * f.out) * B * T;
  state.counters["chunks"] = static_cast<double>(chunk_rows.size());
  state.counters["GEMM_GFLOP/s"] = benchmark::Counter(gemm_flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
// Every BM_emergence point (B = 64, what emergence_peer.sh looks up), and the step config the speed goal names.
BENCHMARK(BM_step_gemm_floor)
    ->ArgNames({"C", "H", "T", "B"})
    ->ArgsProduct({{32, 64, 128}, {4}, {16, 32, 64}, {64}})
    ->Args({128, 4, 64, 32})
    ->Unit(benchmark::kMillisecond);

struct EmergenceRun {
  bool emerged = false;
  int steps = 0;             // emergence step (the cap if not emerged)
  double seconds = 0.0;      // wall time to the probe that first saw it (to the cap if not emerged)
  double cpu_seconds = 0.0;  // the same in process CPU time (steadier on a shared machine)
};

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

TrainConfig firstrecall_config(int d, int T, std::uint64_t seed, int threads) {
  TrainConfig c;
  c.model = bench_model(d, 4, T);
  c.data.task = Task::firstrecall;
  c.data.vocab = 64;
  c.data.seq_len = T;
  c.data.triggers = 4;
  c.data.trigger_prob = 0.1;
  c.batch = 64;
  c.steps = kCap;
  c.lr = 3e-3;
  c.optim.weight_decay = 0.1;
  c.clip = 1.0;
  c.seed = seed;
  c.threads = threads;
  c.probe.every = kProbeEvery;
  c.probe.batch = 128;
  return c;
}

// The loop of sim::train() (same init, data streams, step, clipping, AdamW, probes), stopped once
// identification has held at kConfirm consecutive probes.
EmergenceRun train_to_emergence(const TrainConfig& c) {
  using clock = std::chrono::steady_clock;
  DataConfig data = c.data;
  data.seed = c.seed;
  const DataGenerator gen(data);
  const int B = c.batch;
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B) * gen.row_length());
  Model<float> model(c.model, B);
  Prober prober(c.model, gen, c.probe);
  ParallelStep step(c.model, B, c.threads);
  const auto start = clock::now();
  const double cpu_start = process_cpu_seconds();
  model.init(c.seed, c.init);
  Optimizer<float> opt(model.layout(), c.optim);
  std::vector<ProbeRecord> trace;
  std::vector<double> probe_time, probe_cpu;
  auto probe = [&](int s) {
    trace.push_back(prober.probe(model, s));
    probe_time.push_back(std::chrono::duration<double>(clock::now() - start).count());
    probe_cpu.push_back(process_cpu_seconds() - cpu_start);
    analyse_trace(trace, c.probe, c.data.task);  // sets each record's identification
    const int n = static_cast<int>(trace.size());
    if (n < kConfirm) return false;
    for (int i = n - kConfirm; i < n; ++i)
      if (!trace[static_cast<std::size_t>(i)].identification) return false;
    return true;
  };
  EmergenceRun r;
  if (!probe(0)) {
    for (int s = 0; s < c.steps; ++s) {
      gen.fill(0, static_cast<std::uint64_t>(s), B, rows.data());
      const double loss = step.forward_backward(model, rows.data());
      auto g = model.grads();
      double grad_norm = std::sqrt(static_cast<double>(g.squaredNorm()));
      if (!std::isfinite(grad_norm)) grad_norm = std::sqrt(g.template cast<double>().squaredNorm());
      if (!std::isfinite(loss) || !std::isfinite(grad_norm)) break;
      if (c.clip > 0.0 && grad_norm > c.clip) g *= static_cast<float>(c.clip / grad_norm);
      opt.step(model.params(), model.grads(), learning_rate(c, s));
      if ((s + 1) % c.probe.every == 0 || s + 1 == c.steps)
        if (probe(s + 1)) break;
    }
  }
  const int n = static_cast<int>(trace.size());
  if (n >= kConfirm && trace.back().identification) {
    int first = n - 1;
    while (first > 0 && trace[static_cast<std::size_t>(first - 1)].identification) --first;
    if (n - first >= kConfirm) {
      r.emerged = true;
      r.steps = trace[static_cast<std::size_t>(first)].step;
      r.seconds = probe_time[static_cast<std::size_t>(first)];
      r.cpu_seconds = probe_cpu[static_cast<std::size_t>(first)];
      return r;
    }
  }
  r.steps = c.steps;
  r.seconds = probe_time.back();
  r.cpu_seconds = probe_cpu.back();
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void BM_emergence(benchmark::State& state) {
  const int d = static_cast<int>(state.range(0)), T = static_cast<int>(state.range(1));
  const int seeds = env_int("P0SIM_EMERGE_SEEDS", 3), threads = env_int("P0SIM_EMERGE_THREADS", 1);
  std::vector<double> steps, seconds, cpu;
  int emerged = 0;
  for (auto _ : state) {
    steps.clear();
    seconds.clear();
    cpu.clear();
    emerged = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      const EmergenceRun r = train_to_emergence(firstrecall_config(d, T, static_cast<std::uint64_t>(seed), threads));
      steps.push_back(r.steps);
      seconds.push_back(r.seconds);
      cpu.push_back(r.cpu_seconds);
      emerged += r.emerged ? 1 : 0;
    }
  }
  const double s = median(steps);
  state.counters["steps_to_emergence"] = s;
  state.counters["tokens_to_emergence"] = s * 64.0 * T;
  state.counters["seconds_to_emergence"] = median(seconds);
  state.counters["cpu_seconds_to_emergence"] = median(cpu);
  state.counters["emerged"] = static_cast<double>(emerged) / seeds;
  state.counters["threads"] = threads;
}
BENCHMARK(BM_emergence)
    ->ArgNames({"d", "T"})
    ->ArgsProduct({{32, 64, 128}, {16, 32, 64}})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

void BM_circuit(benchmark::State& state) {
  p0sim::study::CircuitPoint p;
  p.d = static_cast<int>(state.range(0));
  p.T = static_cast<int>(state.range(1));
  const p0sim::study::CircuitOptions o;
  for (auto _ : state) {
    for (Mask mask : {Mask::causal, Mask::bidirectional}) {
      p.mask = mask;
      const auto r = p0sim::study::run_circuit(p, o);
      benchmark::DoNotOptimize(r.identified_frac);
    }
  }
}
BENCHMARK(BM_circuit)->ArgNames({"d", "T"})->ArgsProduct({{32, 64, 128}, {16, 32, 64}})->Unit(benchmark::kMillisecond);

}  // namespace
