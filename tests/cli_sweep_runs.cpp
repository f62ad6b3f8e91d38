// `p0sim sweep` and `p0sim sweep-merge` through the binary: results.csv has the same
// bytes for --threads 1 and 2, after a SIGKILL and --resume, and for shards merged; adding a grid
// value leaves the other rows unchanged; the theory kind; an experiment's variants as a grid key;
// one-line exit-2 errors that create nothing. With the MPI build, mpirun gives the same bytes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/engine_version.hpp"
#include "common/rng.hpp"
#include "study/sweep.hpp"
#include "tests/test_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace cli_sweep_runs_test {

namespace fs = std::filesystem;

namespace {

const p0sim::test::ScratchRoot scratch("p0sim_cli_sweep_");

struct Outcome {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Outcome run_p0sim(const std::string& args, const std::string& launcher = "") {
  const fs::path out = scratch.file("stdout.txt"), err = scratch.file("stderr.txt");
  const std::string cmd =
      launcher + std::string(P0SIM_BINARY) + " " + args + " > " + out.string() + " 2> " + err.string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Tiny trainings: a few milliseconds each, so the whole file runs in seconds.
const std::string kTinyBase =
    "--vocab 16 --heads 2 --batch 8 --task firstrecall --lr 3e-3 --probe-every 10 --probe-batch 16 --seed 5";
const std::string kTinyTrain = kTinyBase + " --steps 20";
const std::string kGrid = " --grid d-model=8,16 --grid seq-len=4:8:x2 --seeds 2";

std::string sweep_args(const std::string& extra, const fs::path& out) {
  return "sweep " + kTinyTrain + kGrid + " " + extra + " --out " + out.string();
}

// The reference sweep (threads 1), computed once.
const std::string& reference_csv() {
  static const std::string csv = [] {
    const fs::path dir = scratch.file("reference");
    const Outcome o = run_p0sim(sweep_args("--threads 1", dir));
    REQUIRE(o.code == 0);
    return slurp(dir / "results.csv");
  }();
  return csv;
}

}  // namespace

TEST_CASE("sweep results.csv is byte-identical for --threads 1 and 2, in canonical order", "[cli][sweep]") {
  const std::string& csv = reference_csv();
  const fs::path two = scratch.file("threads2");
  REQUIRE(run_p0sim(sweep_args("--threads 2", two)).code == 0);
  CHECK(slurp(two / "results.csv") == csv);

  const auto rows = lines(csv);
  REQUIRE(rows.size() == 1 + 2 * 2 * 2);
  // The one results schema of experiments and sweeps (study/results.hpp), after the grid keys.
  CHECK(rows[0].rfind(
            "d-model,seq-len,seed_index,seed,engine_version,loss,task_accuracy,first_trigger_accuracy,l1_active_attn_"
            "to_0,"
            "final_loss,emerged_identification,emerged_high_norm,emerged_sink,emerged_all,high_norm_probes,sink_probes,"
            "stage,p0_norm_ratio_l0,",
            0) == 0);
  CHECK(rows[0].find("wall") == std::string::npos);  // timings live in timings.csv
  // Canonical order: axes by name, values ascending, last axis fastest, then the seed index.
  const char* ids[] = {"8,4,0,", "8,4,1,", "8,8,0,", "8,8,1,", "16,4,0,", "16,4,1,", "16,8,0,", "16,8,1,"};
  for (int i = 0; i < 8; ++i) CHECK(rows[1 + i].rfind(ids[i], 0) == 0);
  // The seed is derived from (base seed, point key, seed index).
  CHECK(rows[4].rfind("8,8,1," + std::to_string(p0sim::derive_seed(5, "d-model=8,seq-len=8", 1)) + ",", 0) == 0);
  CHECK(lines(slurp(two / "timings.csv")).size() == rows.size());
  CHECK(lines(slurp(two / "timings.csv"))[0] == "d-model,seq-len,seed_index,wall_seconds,worker");
  CHECK(slurp(two / "sweep.toml").find("grid = [\"d-model=8,16\", \"seq-len=4,8\"]") != std::string::npos);

  // sweep.toml is accepted back by --config and reproduces the results.
  const fs::path again = scratch.file("again");
  REQUIRE(run_p0sim("sweep --config " + (two / "sweep.toml").string() + " --out " + again.string()).code == 0);
  CHECK(slurp(again / "results.csv") == csv);
  CHECK(slurp(again / "sweep.toml") == slurp(two / "sweep.toml"));
}

TEST_CASE("sweep killed with SIGKILL mid-run, then --resume, gives the same bytes", "[cli][sweep]") {
  // Longer runs than the reference's (tens of milliseconds each), so the kill lands mid-sweep.
  const std::string longer = "sweep " + kTinyBase + " --steps 150 --grid d-model=16,32 --grid seq-len=8,16 --seeds 2";
  const fs::path whole = scratch.file("unkilled"), dir = scratch.file("killed");
  REQUIRE(run_p0sim(longer + " --threads 2 --out " + whole.string()).code == 0);
  const std::string csv = slurp(whole / "results.csv");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::freopen("/dev/null", "w", stderr);
    const std::string cmd = "exec " + std::string(P0SIM_BINARY) + " " + longer + " --threads 1 --out " + dir.string();
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Kill as soon as the first row is in: the runs in flight are lost, the finished ones kept.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && lines(slurp(dir / "results.csv")).size() < 2)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status));
  const std::size_t kept = lines(slurp(dir / "results.csv")).size() - 1;
  INFO("rows kept after the kill: " << kept);
  CHECK(kept >= 1);
  CHECK(kept < 8);
  // Whatever the kill left, every line is whole (a torn last line is cut by --resume).
  const Outcome resumed = run_p0sim(longer + " --threads 2 --resume --out " + dir.string());
  REQUIRE(resumed.code == 0);
  CHECK(slurp(dir / "results.csv") == csv);
  CHECK(resumed.out.find("already done") != std::string::npos);

  // A finished sweep resumed again computes nothing and keeps its bytes.
  const Outcome idle = run_p0sim(longer + " --resume --out " + dir.string());
  REQUIRE(idle.code == 0);
  CHECK(idle.out.find(", 0 computed, 8 already done") != std::string::npos);
  CHECK(slurp(dir / "results.csv") == csv);

  // A torn last line (a kill in the middle of a write) is dropped and its run recomputed.
  std::string torn = csv.substr(0, csv.size() - 1);
  torn = torn.substr(0, torn.rfind('\n') + 1) + "32,16,1,123";
  std::ofstream(dir / "results.csv", std::ios::binary | std::ios::trunc) << torn;
  REQUIRE(run_p0sim(longer + " --resume --out " + dir.string()).code == 0);
  CHECK(slurp(dir / "results.csv") == csv);

  // So is a header torn by a kill right at the start.
  std::ofstream(dir / "results.csv", std::ios::binary | std::ios::trunc) << csv.substr(0, 7);
  REQUIRE(run_p0sim(longer + " --resume --out " + dir.string()).code == 0);
  CHECK(slurp(dir / "results.csv") == csv);

  // --resume of a different sweep is refused.
  const Outcome other = run_p0sim(longer + " --warmup 3 --resume --out " + dir.string());
  CHECK(other.code == 2);
  CHECK(other.err.find("--resume") != std::string::npos);
  CHECK(other.err.find("different sweep") != std::string::npos);
  // Its error names the way back, and following it continues the sweep as it was.
  const std::string recorded = (dir / "sweep.toml").string();
  CHECK(other.err.find("--config " + recorded) != std::string::npos);
  REQUIRE(run_p0sim("sweep --config " + recorded + " --resume --out " + dir.string()).code == 0);
  CHECK(slurp(dir / "results.csv") == csv);

  // So is --resume of a sweep computed by another engine version: its rows and new ones would
  // come from two arithmetics. (Simulated by rewriting the engine line sweep.toml records.)
  std::string toml = slurp(dir / "sweep.toml");
  const std::string line = "# engine_version = " + std::to_string(p0sim::kEngineVersion) + "\n";
  REQUIRE(toml.find(line) != std::string::npos);
  toml.replace(toml.find(line), line.size(), "# engine_version = " + std::to_string(p0sim::kEngineVersion + 1) + "\n");
  std::ofstream(dir / "sweep.toml", std::ios::binary | std::ios::trunc) << toml;
  const Outcome older = run_p0sim(longer + " --resume --out " + dir.string());
  CHECK(older.code == 2);
  CHECK(older.err.find("another engine version") != std::string::npos);
  CHECK(slurp(dir / "results.csv") == csv);
}

TEST_CASE("sweep shards 0/2 and 1/2 merged equal the unsharded sweep", "[cli][sweep]") {
  const std::string& csv = reference_csv();
  const fs::path s0 = scratch.file("shard0"), s1 = scratch.file("shard1"), merged = scratch.file("merged");
  REQUIRE(run_p0sim(sweep_args("--shard 0/2", s0)).code == 0);
  REQUIRE(run_p0sim(sweep_args("--shard 1/2 --threads 2", s1)).code == 0);
  CHECK(lines(slurp(s0 / "results.csv")).size() == 1 + 4);
  const Outcome m = run_p0sim("sweep-merge " + s1.string() + " " + s0.string() + " --out " + merged.string());
  REQUIRE(m.code == 0);
  CHECK(slurp(merged / "results.csv") == csv);
  CHECK(slurp(merged / "sweep.toml") == slurp(scratch.file("reference") / "sweep.toml"));

  // A missing shard, and a shard of another sweep, are refused with exit 2.
  const Outcome missing = run_p0sim("sweep-merge " + s0.string() + " --out " + scratch.file("m2").string());
  CHECK(missing.code == 2);
  CHECK(missing.err.find("4 of the sweep's 8 runs") != std::string::npos);
  const fs::path foreign = scratch.file("foreign");
  REQUIRE(run_p0sim(sweep_args("--shard 1/2 --warmup 3", foreign)).code == 0);
  const Outcome mixed =
      run_p0sim("sweep-merge " + s0.string() + " " + foreign.string() + " --out " + scratch.file("m3").string());
  CHECK(mixed.code == 2);
  CHECK(mixed.err.find("different sweep") != std::string::npos);
  CHECK(std::count(mixed.err.begin(), mixed.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(scratch.file("m2")));
  CHECK_FALSE(fs::exists(scratch.file("m3")));
}

TEST_CASE("sweep: adding a grid value leaves the other points' rows unchanged", "[cli][sweep]") {
  const std::string& csv = reference_csv();
  const fs::path wider = scratch.file("wider");
  REQUIRE(run_p0sim("sweep " + kTinyTrain + " --grid seq-len=8,4,6 --grid d-model=16,8 --seeds 2 --threads 2 --out " +
                    wider.string())
              .code == 0);
  const auto old_rows = lines(csv), new_rows = lines(slurp(wider / "results.csv"));
  REQUIRE(new_rows.size() == 1 + 2 * 3 * 2);
  CHECK(new_rows[0] == old_rows[0]);
  const std::set<std::string> fresh(new_rows.begin(), new_rows.end());
  for (const auto& row : old_rows) {
    CAPTURE(row);
    CHECK(fresh.count(row) == 1);
  }
}

TEST_CASE("sweep --kind theory sweeps the cone model", "[cli][sweep]") {
  const std::string args =
      "sweep --kind theory --grid d=8,32 --grid T=2:16:x8 --grid mask=causal,bidirectional --trials 400 --seeds 2 "
      "--seed 3";
  const fs::path a = scratch.file("theory1"), b = scratch.file("theory2");
  REQUIRE(run_p0sim(args + " --threads 1 --out " + a.string()).code == 0);
  REQUIRE(run_p0sim(args + " --threads 2 --out " + b.string()).code == 0);
  const std::string csv = slurp(a / "results.csv");
  CHECK(slurp(b / "results.csv") == csv);
  const auto rows = lines(csv);
  REQUIRE(rows.size() == 1 + 2 * 2 * 2 * 2);
  CHECK(rows[0] ==
        "T,d,mask,seed_index,seed,engine_version,p0_gap_t1_closed_form,p0_gap_t1_mc,p0_gap_last_closed_form,p0_gap_"
        "last_mc,"
        "p0_gap_last_ci99,p0_beats_last_closed_form,p0_beats_last_mc,p0_largest_prob,p0_largest_union_bound");
  // T = 16, d = 32, causal: position 0 stands out; bidirectional: it does not.
  auto field = [](const std::string& row, int k) {
    std::istringstream in(row);
    std::string f;
    for (int i = 0; i <= k; ++i) std::getline(in, f, ',');
    return f;
  };
  for (const auto& row : rows) {
    if (row.rfind("16,32,causal,", 0) == 0) {
      CHECK(std::stod(field(row, 8)) > 1.0);   // p0_gap_last_mc
      CHECK(std::stod(field(row, 12)) > 0.9);  // p0_largest_prob
    }
    if (row.rfind("16,32,bidirectional,", 0) == 0) CHECK(std::stod(field(row, 12)) == 0.0);
  }
  CHECK(slurp(a / "sweep.toml").find("kind = \"theory\"") != std::string::npos);
}

TEST_CASE("sweep --kind theory takes the Monte-Carlo estimator as the grid key `estimator`", "[cli][sweep]") {
  const std::string args =
      "sweep --kind theory --grid d=16 --grid T=8 --grid estimator=full,radial --trials 2000 --seed 4";
  const fs::path a = scratch.file("theory_estimator1"), b = scratch.file("theory_estimator2");
  REQUIRE(run_p0sim(args + " --threads 1 --out " + a.string()).code == 0);
  REQUIRE(run_p0sim(args + " --threads 2 --out " + b.string()).code == 0);
  const std::string csv = slurp(a / "results.csv");
  CHECK(slurp(b / "results.csv") == csv);
  const auto rows = lines(csv);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].rfind("T,d,estimator,seed_index,", 0) == 0);
  CHECK(rows[1].rfind("8,16,full,0,", 0) == 0);
  CHECK(rows[2].rfind("8,16,radial,0,", 0) == 0);
  CHECK(rows[1].substr(rows[1].find(",0,")) != rows[2].substr(rows[2].find(",0,")));  // other draws
  CHECK(slurp(a / "sweep.toml").find("estimator") != std::string::npos);
}

TEST_CASE("sweep takes an experiment's variants as the grid key `variant`", "[cli][sweep]") {
  const fs::path cfg = scratch.file("exp.toml");
  std::ofstream(cfg)
      << "vocab = 16\nd-model = 16\nheads = 2\nseq-len = 8\nbatch = 8\ntask = \"firstrecall\"\nsteps = 20\n"
         "lr = 3e-3\nprobe-every = 10\nprobe-batch = 16\nseed = 3\n\n[experiment]\nmain = \"main\"\n"
         "control = \"bidirectional\"\n\n[variants.main]\n\n[variants.bidirectional]\nmask = \"bidirectional\"\n"
         "\n[variants.rope]\npos = \"rope\"\n";
  const fs::path out = scratch.file("variants");
  const Outcome o =
      run_p0sim("sweep --config " + cfg.string() +
                " --grid variant=main,bidirectional --grid seq-len=4,8 --threads 2 --keep-runs --out " + out.string());
  REQUIRE(o.code == 0);
  const auto rows = lines(slurp(out / "results.csv"));
  REQUIRE(rows.size() == 1 + 4);
  CHECK(rows[0].rfind("seq-len,variant,seed_index,", 0) == 0);
  CHECK(rows[1].rfind("4,main,0,", 0) == 0);
  CHECK(rows[2].rfind("4,bidirectional,0,", 0) == 0);
  CHECK(fs::exists(out / "runs" / "seq-len=8_variant=bidirectional" / "seed-0" / "trace.csv"));
  CHECK(slurp(out / "sweep.toml").find("# variant bidirectional: mask=bidirectional") != std::string::npos);
  // A grid key that a listed variant sets itself is refused.
  const Outcome clash =
      run_p0sim("sweep --config " + cfg.string() + " --grid variant=main,bidirectional --grid mask=causal --out " +
                scratch.file("clash").string());
  CHECK(clash.code == 2);
  CHECK(clash.err.find("--grid mask") != std::string::npos);
}

TEST_CASE("sweep rejects bad input with one line naming the option, exit 2, and writes nothing", "[cli][sweep]") {
  const fs::path file = scratch.file("a_file.txt");
  std::ofstream(file) << "x";
  const fs::path busy = scratch.fresh_dir("busy");
  std::ofstream(busy / "something.txt") << "x";
  const fs::path out = scratch.file("bad_out");
  struct Case {
    std::string args, expect;
  };
  const std::string base = "sweep " + kTinyTrain + " ";
  const Case cases[] = {
      {base + "--grid learning-rate=1,2 --out " + out.string(), "unknown key 'learning-rate'"},
      {base + "--grid d-model=8,,16 --out " + out.string(), "--grid d-model"},
      {base + "--grid d-model= --out " + out.string(), "--grid"},
      {base + "--grid d-model=32:16:x2 --out " + out.string(), "--grid d-model"},
      {base + "--grid d-model=0,8 --out " + out.string(), "--grid d-model"},
      {base + "--grid lr=-1 --out " + out.string(), "--grid lr"},
      {base + "--grid mask=causal,sideways --out " + out.string(), "--grid mask"},
      {base + "--grid d-model=8,8 --out " + out.string(), "listed twice"},
      {base + "--grid seed=1,2 --out " + out.string(), "--grid seed"},
      {base + "--grid variant=main --out " + out.string(), "--grid variant"},
      {base + "--grid d-model=7 --out " + out.string(), "d-model=7"},  // heads 2 must divide d-model
      {base + "--shard 3/2 --out " + out.string(), "--shard"},
      {base + "--shard 1 --out " + out.string(), "--shard"},
      {base + "--seeds 0 --out " + out.string(), "--seeds"},
      {base + "--threads 0 --out " + out.string(), "--threads"},
      {base + "--grid d-model=8", "--out"},
      {base + "--out " + (file / "sub").string(), "--out"},
      {base + "--out " + busy.string(), "--resume"},
      {"sweep --kind theory --grid d=8 --out " + out.string(), "needs the key T"},
      {"sweep --kind theory --grid d=8 --grid T=4 --grid lr=1 --out " + out.string(), "unknown key 'lr'"},
      {"sweep --kind theory --grid d=1 --grid T=4 --out " + out.string(), "--grid d"},
      {"sweep --kind theory --grid d=8 --grid T=4 --d-model 8 --out " + out.string(), "--d-model"},
      {"sweep --kind theory --grid d=8 --grid T=4 --grid estimator=fast --out " + out.string(), "--grid estimator"},
      {"sweep --kind theory --grid d=8 --grid T=4 --grid model=gauss,cap --grid estimator=radial --out " + out.string(),
       "radial needs --model gauss, got cap"},
      {"sweep-merge " + busy.string() + " --out " + out.string(), "sweep.toml"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const Outcome o = run_p0sim(c.args);
    CHECK(o.code == 2);
    CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
    CHECK(o.err.find(c.expect) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
  CHECK(fs::exists(busy / "something.txt"));
  CHECK_FALSE(fs::exists(busy / "results.csv"));
}

TEST_CASE("p0sim plot SWEEP_DIR draws (d, T) heatmaps with their gnuplot scripts", "[cli][sweep]") {
  reference_csv();
  const fs::path plots = scratch.file("sweep_plots");
  const Outcome o = run_p0sim("plot " + scratch.file("reference").string() + " --out " + plots.string());
  REQUIRE(o.code == 0);
  CHECK(fs::exists(plots / "sweep_p0_norm_ratio.png"));
  CHECK(fs::exists(plots / "sweep_p0_norm_ratio.gp"));
  const fs::path theory = scratch.file("theory_plot_src");
  REQUIRE(
      run_p0sim("sweep --kind theory --grid d=8,16 --grid T=2,8 --grid mask=causal,bidirectional --trials 200 --out " +
                theory.string())
          .code == 0);
  const Outcome t = run_p0sim("plot " + theory.string());
  REQUIRE(t.code == 0);
  CHECK(fs::exists(theory / "plots" / "sweep_gap.png"));
  CHECK(fs::exists(theory / "plots" / "sweep_p0_largest_prob.gp"));
  // A sweep without both d and T has no heatmap: exit 2, and no plot directory is left behind.
  const fs::path flat = scratch.file("d_only");
  REQUIRE(run_p0sim("sweep " + kTinyTrain + " --grid d-model=8,16 --out " + flat.string()).code == 0);
  const Outcome none = run_p0sim("plot " + flat.string() + " --out " + scratch.file("no_plots").string());
  CHECK(none.code == 2);
  CHECK_FALSE(fs::exists(scratch.file("no_plots")));
}

TEST_CASE("canonical numbers name one point however they are typed", "[cli][sweep]") {
  using p0sim::sweep::canonical_number;
  CHECK(canonical_number(16.0) == "16");
  CHECK(canonical_number(1e-3) == "0.001");
  CHECK(canonical_number(0.1) == "0.1");
  CHECK(canonical_number(-0.0) == "0");
  CHECK(canonical_number(2.5e20) == "2.5e+20");
  p0sim::sweep::SweepPlan plan({{"b", {"1", "2"}}, {"a", {"x", "y", "z"}}}, 2);
  CHECK(plan.runs() == 12);
  CHECK(plan.axes()[0].key == "a");
  CHECK(plan.point_key(1) == "a=x,b=2");
  CHECK(plan.run_id(3) == "x,2,1");
  CHECK(plan.index_of("y,1,0") == std::optional<std::size_t>(4));
  CHECK_FALSE(plan.index_of("q,1,0"));
}

#ifdef P0SIM_WITH_MPI
TEST_CASE("sweep under mpirun -np 2 writes the bytes of a single-process sweep", "[cli][sweep][mpi]") {
  const std::string& csv = reference_csv();
  const fs::path dir = scratch.file("mpi");
  const Outcome o = run_p0sim(sweep_args("", dir), "mpirun -np 2 --oversubscribe --allow-run-as-root ");
  REQUIRE(o.code == 0);
  CHECK(slurp(dir / "results.csv") == csv);
  // Both ranks computed runs: rank 1's rows are marked r1 in timings.csv.
  const std::string timings = slurp(dir / "timings.csv");
  CHECK(timings.find(",r1t0\n") != std::string::npos);
  CHECK(timings.find(",r0t0\n") != std::string::npos);
}
#endif

}  // namespace cli_sweep_runs_test
