// The sweep scheduler's own cost per run: pool dispatch, the results journal's
// whole-line append (one write(2) under its lock), the progress-free bookkeeping, and the final
// sorted rewrite, around a run that does nothing. Compare with a run of the throughput
// sweep (bench/sweep_throughput.sh: ~0.3 s per 200-step training) to see that it is negligible.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <numeric>
#include <string>
#include <unistd.h>
#include <vector>

#include "study/sweep.hpp"

namespace {

using namespace p0sim::sweep;
namespace fs = std::filesystem;

void BM_sweep_scheduler_overhead(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  // 4 points x 256 seeds = 1024 runs, keyed like the throughput sweep's.
  const SweepPlan plan({{"d-model", {"16", "32"}}, {"seq-len", {"16", "32"}}}, 256);
  const fs::path dir = fs::temp_directory_path() / ("p0sim_bench_sweep_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<std::size_t> jobs(plan.runs());
  std::iota(jobs.begin(), jobs.end(), std::size_t{0});
  // A row as long as a 2-layer train row (~400 bytes).
  const std::string metrics(380, '1');
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove(dir / "results.csv");
    state.ResumeTiming();
    Journal journal(dir / "results.csv", "d-model,seq-len,seed_index,metrics\n", 3, plan, "--resume");
    run_pool(
        jobs, threads,
        [&](std::size_t run) {
          return JobResult{plan.run_id(run) + "," + metrics, 0.0, {}};
        },
        [&](std::size_t run, const JobResult& r) { journal.append(run, r.row); });
    journal.finish();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(plan.runs()));
  fs::remove_all(dir);
}
BENCHMARK(BM_sweep_scheduler_overhead)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
