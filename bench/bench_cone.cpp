// Monte-Carlo kernel of the cone model: full-vector sampling, prefix sums, norms
// (BM_cone_mc), and the radial estimator of the gauss model (BM_cone_mc_radial, O(T*H) draws
// per sequence). Yardstick: bench/peers/numpy_cone.py (gauss, d=64, T=64, float32,
// full-vector); bench/peers/cone_peer.sh runs them and prints the ratios.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "theory/cone_mc.hpp"

namespace {

using namespace p0sim::theory;

ConePoint bench_point(int d, int T) {
  ConePoint p;
  p.model = ValueModel::gauss;
  p.mask = AttnMask::causal;
  p.d = d;
  p.T = T;
  p.m = 1.0;
  p.sigma = 1.0;
  return p;
}

// Once per estimator, before timing: the kernel's E||o_t||^2 at the last position agrees with
// m^2 + d sigma^2 / T (exact for gauss) within 5 standard errors; abort otherwise.
void validate_once(McEstimator estimator) {
  static bool done[2] = {false, false};
  if (done[static_cast<int>(estimator)]) return;
  done[static_cast<int>(estimator)] = true;
  const ConePoint p = bench_point(64, 64);
  McOptions opt;
  opt.trials = 4000;
  opt.seed = 7;
  opt.estimator = estimator;
  const McResult r = simulate(p, {63}, opt);
  const auto& s = r.stats[0][static_cast<int>(Quantity::norm_sq_mean)];
  const double expected = 1.0 + 64.0 / 64.0;
  if (!(std::fabs(s.mean - expected) < 5.0 * s.std_error())) std::abort();
}

void run_cone_mc(benchmark::State& state, McEstimator estimator) {
  validate_once(estimator);
  const int d = static_cast<int>(state.range(0)), T = static_cast<int>(state.range(1));
  const ConePoint p = bench_point(d, T);
  std::vector<int> positions(static_cast<std::size_t>(T));
  std::iota(positions.begin(), positions.end(), 0);  // all positions, as the CLI's default
  McOptions opt;
  opt.threads = static_cast<int>(state.range(2));
  opt.estimator = estimator;
  // Enough sequences per iteration that thread start-up and merging are amortised as in a run
  // (radial: its cost grows with T, not with d).
  opt.trials = estimator == McEstimator::full
                   ? std::max<std::int64_t>(4096, (std::int64_t{1} << 24) / (static_cast<std::int64_t>(d) * T))
                   : std::max<std::int64_t>(16384, (std::int64_t{1} << 22) / T);
  opt.seed = 1;
  for (auto _ : state) {
    McResult r = simulate(p, positions, opt);
    benchmark::DoNotOptimize(r.stats.data());
    opt.seed++;
  }
  const double seqs = static_cast<double>(opt.trials);
  state.counters["sequences/s"] = benchmark::Counter(seqs, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["vectors/s"] = benchmark::Counter(seqs * T, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_cone_mc(benchmark::State& state) { run_cone_mc(state, McEstimator::full); }
void BM_cone_mc_radial(benchmark::State& state) { run_cone_mc(state, McEstimator::radial); }

BENCHMARK(BM_cone_mc)
    ->ArgNames({"d", "T", "threads"})
    ->ArgsProduct({{16, 64, 256}, {16, 64, 256}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_cone_mc_radial)
    ->ArgNames({"d", "T", "threads"})
    ->ArgsProduct({{16, 64, 256}, {16, 64, 256}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
