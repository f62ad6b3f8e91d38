// `p0sim plot` through the binary: which PNGs and .gp scripts it writes for a run, an experiment
// and a theory CSV, that each script redraws its PNG byte for byte, the probe dump the run plots
// read, and one-line exit-2 errors for bad input.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "sim/npy.hpp"

#include "tests/test_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace cli_plot_outputs_test {

namespace fs = std::filesystem;

namespace {

const p0sim::test::ScratchRoot scratch("p0sim_cli_plot_");
const fs::path& kRoot = scratch.root();
using p0sim::test::Outcome;
using p0sim::test::slurp;

Outcome run_shell(const std::string& cmd) { return p0sim::test::run_shell(scratch, cmd); }
Outcome run_p0sim(const std::string& args) { return run_shell(std::string(P0SIM_BINARY) + " " + args); }

fs::path fresh(const std::string& name) {
  const fs::path d = kRoot / name;
  fs::remove_all(d);
  return d;
}

bool is_png(const fs::path& p) {
  const std::string magic = "\x89PNG\r\n\x1a\n";
  const std::string bytes = slurp(p);
  return bytes.size() > 100 && bytes.compare(0, magic.size(), magic) == 0;
}

// The .gp beside NAME.png must redraw it, byte for byte, when run in that directory.
void check_figure(const fs::path& dir, const std::string& name) {
  CAPTURE(dir.string(), name);
  const fs::path png = dir / (name + ".png"), gp = dir / (name + ".gp");
  REQUIRE(fs::exists(gp));
  REQUIRE(fs::file_size(gp) > 0);
  REQUIRE(is_png(png));
  const std::string original = slurp(png);
  fs::remove(png);
  const Outcome redraw = run_shell("cd '" + dir.string() + "' && gnuplot '" + name + ".gp'");
  CAPTURE(redraw.err);
  REQUIRE(redraw.code == 0);
  CHECK(slurp(png) == original);
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Small enough for a fraction of a second: 2 layers, 2 heads, P = 8, probes every 5 steps.
const std::string kTinyRun =
    "train --vocab 8 --d-model 16 --heads 2 --d-ff 32 --seq-len 8 --batch 4 --steps 10 --task firstrecall "
    "--triggers 2 --probe-every 5 --probe-batch 6 --seed 3";

}  // namespace

TEST_CASE("plot of a probed run writes emergence, per-head, heatmap and norm PNGs that their .gp scripts redraw",
          "[cli][plot]") {
  const fs::path run = fresh("run");
  REQUIRE(run_p0sim(kTinyRun + " --out " + run.string()).code == 0);
  const Outcome o = run_p0sim("plot " + run.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  for (const char* name : {"emergence", "heads_attn_to_0", "attention_heatmaps", "norm_by_position"})
    check_figure(run / "plots", name);
  // No temporary image is left behind.
  for (const auto& e : fs::directory_iterator(run / "plots")) CHECK(e.path().extension() != ".tmp");
}

TEST_CASE("the probe dump holds causal attention rows that sum to 1 and a norm per layer and position", "[cli][plot]") {
  const fs::path run = fresh("dump");
  REQUIRE(run_p0sim(kTinyRun + " --out " + run.string()).code == 0);
  const auto attn = p0sim::sim::read_npy(run / "probe" / "attn_mean.npy");
  REQUIRE(attn.shape == std::vector<std::int64_t>{2, 2, 8, 8});  // (L,H,P,P)
  const auto a = attn.as_float();
  for (int lh = 0; lh < 4; ++lh)
    for (int q = 0; q < 8; ++q) {
      double sum = 0;
      for (int k = 0; k < 8; ++k) {
        const float v = a[static_cast<std::size_t>((lh * 8 + q) * 8 + k)];
        if (k > q) CHECK(v == 0.0f);  // the causal mask: no weight on future keys
        sum += v;
      }
      // A mean of softmax rows: 1 up to float rounding over 8 terms and 6 rows.
      CHECK_THAT(sum, Catch::Matchers::WithinAbs(1.0, 1e-5));
    }
  const auto norm = p0sim::sim::read_npy(run / "probe" / "norm_by_position.npy");
  REQUIRE(norm.shape == std::vector<std::int64_t>{3, 8});  // (L+1,P)
  for (float v : norm.as_float()) CHECK(v > 0.0f);
}

TEST_CASE("plot of an experiment draws one bar chart per numeric metric column and skips text columns", "[cli][plot]") {
  const fs::path exp = fresh("experiment");
  fs::create_directories(exp);
  std::ofstream(exp / "results.csv") << "variant,seed_index,seed,final_loss,stage,emerged_sink\n"
                                        "main,0,11,1.5,final,100\nmain,1,12,1.7,early,\nmain,2,13,1.6,final,120\n"
                                        "prefix-bidirectional,0,21,2.5,none,\nprefix-bidirectional,1,22,2.4,none,\n";
  const Outcome o = run_p0sim("plot " + exp.string() + " --out " + (exp / "figs").string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  check_figure(exp / "figs", "bars_final_loss");
  check_figure(exp / "figs", "bars_emerged_sink");
  CHECK_FALSE(fs::exists(exp / "figs" / "bars_stage.png"));
  CHECK_FALSE(fs::exists(exp / "figs" / "bars_seed.png"));
  CHECK_FALSE(fs::exists(exp / "figs" / "bars_seed_index.png"));
}

TEST_CASE("plot of a theory cone CSV file draws the gap and the largest-norm probability", "[cli][plot]") {
  const fs::path dir = fresh("cone");
  fs::create_directories(dir);
  REQUIRE(
      run_p0sim("theory cone --model gauss --d 4,16 --T 4,16 --trials 200 --out " + (dir / "cone.csv").string()).code ==
      0);
  const Outcome o = run_p0sim("plot " + (dir / "cone.csv").string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  check_figure(dir / "plots", "p0_gap");
  check_figure(dir / "plots", "p0_largest_prob");
}

TEST_CASE("plot rejects bad input with one line and exit 2", "[cli][plot]") {
  const fs::path empty = fresh("empty");
  fs::create_directories(empty);
  std::ofstream(empty / "notes.csv") << "a,b\n1,2\n";
  const fs::path broken = fresh("broken_run");
  fs::create_directories(broken);
  std::ofstream(broken / "trace.csv") << "step,layer\n0,0\n";  // a run without the metric columns
  for (const std::string& args :
       {"plot " + (kRoot / "no_such_dir").string(), "plot " + empty.string(), "plot " + (empty / "notes.csv").string(),
        "plot " + broken.string(), std::string("plot")}) {
    CAPTURE(args);
    const Outcome o = run_p0sim(args);
    CHECK(o.code == 2);
    CHECK(lines(o.err) == 1);
  }
  CHECK_FALSE(fs::exists(empty / "plots"));  // bad input leaves nothing behind
  CHECK_FALSE(fs::exists(broken / "plots"));
}

TEST_CASE("plot never overwrites an earlier plot directory unless --force", "[cli][plot]") {
  const fs::path exp = fresh("again");
  fs::create_directories(exp);
  std::ofstream(exp / "results.csv") << "variant,seed,final_loss\nmain,1,1.5\nmain,2,1.7\n";
  REQUIRE(run_p0sim("plot " + exp.string()).code == 0);
  const Outcome again = run_p0sim("plot " + exp.string());
  CHECK(again.code == 2);
  CHECK(again.err.find("--force") != std::string::npos);
  CHECK(run_p0sim("plot --force " + exp.string()).code == 0);
}

namespace {
// A search over d-model x seq-len (batch follows seq-len, so it adds no axis), hand-made results:
// loss = d-model/100 + seq-len/1000 + seed_index/10000, so every cell's mean is known.
void write_search(const fs::path& dir, bool full_grid) {
  fs::create_directories(dir);
  std::string toml =
      "vocab = 16\nd-model = 16\nheads = 2\nseq-len = 8\nbatch = 8\nsteps = 2\nprobe-every = 1\n"
      "\n[experiment]\nmain = \"\"\ncontrol = \"\"\n";
  std::string csv = "variant,seed_index,seed,loss,copy_accuracy\n";
  for (int C : {16, 32})
    for (int T : {8, 16}) {
      if (!full_grid && C == 32 && T == 16) continue;
      const std::string name = "C" + std::to_string(C) + "_T" + std::to_string(T);
      toml += "\n[variants." + name + "]\nd-model = " + std::to_string(C) + "\nseq-len = " + std::to_string(T) +
              "\nbatch = " + std::to_string(64 / T) + "\n";
      for (int s = 0; s < 2; ++s)
        csv += name + "," + std::to_string(s) + ",1," + std::to_string(C / 100.0 + T / 1000.0 + s / 10000.0) + ",\n";
    }
  std::ofstream(dir / "experiment.toml") << toml;
  std::ofstream(dir / "results.csv") << csv;
}
}  // namespace

TEST_CASE("plot of a search draws a heatmap per metric with each cell's mean in its grid position", "[cli][plot]") {
  const fs::path dir = fresh("search");
  write_search(dir, true);
  const Outcome o = run_p0sim("plot " + dir.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  check_figure(dir / "plots", "heat_loss");
  const std::string gp = slurp(dir / "plots" / "heat_loss.gp");
  // Rows d-model 16, 32; columns seq-len 8, 16; means over the two seeds (+0.00005).
  const auto block = gp.find("$p0 << EOD\n");
  REQUIRE(block != std::string::npos);
  std::istringstream cells(gp.substr(block + 10));
  double cell[4];
  for (double& x : cell) REQUIRE(cells >> x);
  const double expected[4] = {0.16805, 0.17605, 0.32805, 0.33605};
  for (int i = 0; i < 4; ++i) CHECK_THAT(cell[i], Catch::Matchers::WithinAbs(expected[i], 1e-9));
  CHECK(gp.find("set xtics (\"8\" 0, \"16\" 1)") != std::string::npos);
  CHECK(gp.find("set ytics (\"16\" 0, \"32\" 1)") != std::string::npos);
  // The file names the task's accuracy by its old name: read as task_accuracy, with one notice.
  CHECK(o.err.find("column 'copy_accuracy' is now called 'task_accuracy'") != std::string::npos);
  // task_accuracy is empty in every cell: no heatmap of nothing.
  CHECK_FALSE(fs::exists(dir / "plots" / "heat_task_accuracy.png"));
  CHECK_FALSE(fs::exists(dir / "plots" / "heat_copy_accuracy.png"));
}

TEST_CASE("plot of an experiment whose variants are not a full grid draws bars but no heatmap", "[cli][plot]") {
  const fs::path dir = fresh("partial");
  write_search(dir, false);
  const Outcome o = run_p0sim("plot " + dir.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  CHECK(fs::exists(dir / "plots" / "bars_loss.png"));
  CHECK_FALSE(fs::exists(dir / "plots" / "heat_loss.png"));
}

TEST_CASE("plot of an experiment with ablations draws per-variant ablation bars", "[cli][plot]") {
  const fs::path exp = fresh("ablations");
  fs::create_directories(exp);
  std::ofstream(exp / "results.csv") << "variant,seed_index,seed,loss\nmain,0,1,1.5\nmain,1,2,1.6\n";
  std::ofstream(exp / "ablations.csv")
      << "variant,seed_index,component,mode,loss,accuracy,first_accuracy,l1_active_attn_to_0,p0_norm_ratio_l0,p0_norm_"
         "ratio_l1\n"
         "main,0,none,none,1.5,0.99,0.98,0.95,0.3,0.6\nmain,0,l0.mlp,mean,2.5,0.05,0.04,0.1,0.9,1.0\n"
         "main,1,none,none,1.6,0.97,0.96,0.93,0.4,0.7\nmain,1,l0.mlp,mean,2.4,0.07,0.06,0.12,0.8,0.9\n";
  const Outcome o = run_p0sim("plot " + exp.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  check_figure(exp / "plots", "ablations_main");
  const std::string gp = slurp(exp / "plots" / "ablations_main.gp");
  CHECK(gp.find("\"l0.mlp mean\"") != std::string::npos);
}

}  // namespace cli_plot_outputs_test
