// Runs killed at random instants resume from their checkpoints and end with the bytes of
// a run that never stopped; a corrupt newest checkpoint falls back to the older one; divergence
// stops the run with exit 1 naming the step, the tensor and the last good checkpoint.
//
// Byte-identical means every file a run writes, except the wall-clock fields: the tokens_per_s
// column of train.csv, and tokens_per_s and wall_seconds in summary.json.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/test_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace cli_train_resume_test {

namespace fs = std::filesystem;

namespace {

const p0sim::test::ScratchRoot kScratch("p0sim_cli_resume_");

std::vector<std::string> split_args(const std::string& args) {
  std::istringstream in(args);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

pid_t spawn(const std::string& args) {
  const std::vector<std::string> words = split_args(args);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(devnull, STDERR_FILENO);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(P0SIM_BINARY));
    for (const auto& w : words) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(nullptr);
    ::execv(P0SIM_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

using p0sim::test::Outcome;
using p0sim::test::slurp;

Outcome run_p0sim(const std::string& args) {
  return p0sim::test::run_shell(kScratch, std::string(P0SIM_BINARY) + " " + args);
}

fs::path dir(const std::string& name) {
  const fs::path d = kScratch.root() / name;
  fs::remove_all(d);
  return d;
}

// train.csv without its last column (tokens_per_s, wall clock).
std::string without_rate_column(const std::string& csv) {
  std::istringstream in(csv);
  std::string line, out;
  while (std::getline(in, line)) out += line.substr(0, line.rfind(',')) + "\n";
  return out;
}

void require_same_run(const fs::path& a, const fs::path& b) {
  int compared = 0;
  for (const auto& e : fs::recursive_directory_iterator(a)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), a);
    // compared through the results they lead to (both hold timings)
    if (*rel.begin() == "checkpoint" || rel == "record.ckpt") continue;
    CAPTURE(rel.string());
    REQUIRE(fs::exists(b / rel));
    if (rel == "train.csv") {
      REQUIRE(without_rate_column(slurp(e.path())) == without_rate_column(slurp(b / rel)));
    } else if (rel == "summary.json") {
      auto x = nlohmann::json::parse(slurp(e.path())), y = nlohmann::json::parse(slurp(b / rel));
      for (auto* j : {&x, &y}) {
        j->erase("tokens_per_s");
        j->erase("wall_seconds");
        (*j)["config"].erase("threads");  // how the last session ran, not what it computed
      }
      REQUIRE(x.dump() == y.dump());
    } else {
      REQUIRE(slurp(e.path()) == slurp(b / rel));
    }
    ++compared;
  }
  CHECK(compared >= 25);  // config.toml, train/trace/heads.csv, summary, weights, probe dumps
  int in_b = 0;           // and no file left over in b (a stale ablations.csv, say)
  for (const auto& e : fs::recursive_directory_iterator(b)) {
    const fs::path rel = fs::relative(e.path(), b);
    if (e.is_regular_file() && *rel.begin() != "checkpoint" && rel != "record.ckpt") ++in_b;
  }
  CHECK(in_b == compared);
}

// Deletes what a run writes at its end, as if it had been killed just before: the checkpoints stay.
void drop_results(const fs::path& run) {
  for (const char* f : {"summary.json", "train.csv", "trace.csv", "heads.csv", "ablations.csv"}) fs::remove(run / f);
  fs::remove_all(run / "weights");
  fs::remove_all(run / "probe");
}

// The step of a checkpoint file (layout in sim/checkpoint.hpp: 32-byte header, then the
// fingerprint string, then the step), or -1 when there is none.
long checkpoint_step(const fs::path& file) {
  const std::string bytes = slurp(file);
  if (bytes.size() < 40) return -1;
  std::uint64_t len = 0;
  std::memcpy(&len, bytes.data() + 32, 8);
  if (bytes.size() < 40 + len + 8) return -1;
  std::int64_t step = 0;
  std::memcpy(&step, bytes.data() + 40 + len, 8);
  return static_cast<long>(step);
}

// Starts `args` and kills it with SIGKILL once `checkpoint` holds step `target` or later, after a
// further random pause of up to a few checkpoint intervals (so kills land mid-step and mid-write
// too). Returns true if the process was still running when killed.
bool kill_at_step(const std::string& args, const fs::path& checkpoint, long target, double pause_s) {
  const pid_t pid = spawn(args);
  int status = 0;
  while (checkpoint_step(checkpoint) < target) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;  // finished first
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
  if (::waitpid(pid, &status, WNOHANG) == pid) return false;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

// A two-variant firstrecall experiment small enough to train in well under a second; `bidir_extra`
// adds keys to the control variant.
std::string tiny_experiment(int steps, int checkpoint_every, const std::string& bidir_extra = "") {
  return "vocab = 16\nd-model = 16\nheads = 2\nd-ff = 32\nseq-len = 8\nbatch = 4\nsteps = " + std::to_string(steps) +
         "\nprobe-every = 10\nprobe-batch = 8\ntask = \"firstrecall\"\ntriggers = 2\ncheckpoint-every = " +
         std::to_string(checkpoint_every) +
         "\n[experiment]\nmain = \"main\"\ncontrol = \"bidir\"\n[variants.main]\n"
         "[variants.bidir]\nmask = \"prefix-bidirectional\"\n" +
         bidir_extra;
}

const std::string kRun =
    "train --vocab 16 --d-model 32 --heads 2 --d-ff 64 --seq-len 16 --batch 8 --steps 400 --lr 3e-3 --warmup 10 "
    "--schedule cosine --task firstrecall --triggers 2 --probe-every 25 --probe-batch 16 --checkpoint-every 9 "
    "--log-every 1000 --seed 11";

}  // namespace

TEST_CASE("a train run killed at random instants resumes to the bytes of an uninterrupted run", "[cli][resume]") {
  const fs::path whole = dir("whole"), killed = dir("killed");
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(run_p0sim(kRun + " --out " + whole.string()).code == 0);
  const double duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Each kill aims at a random step between the newest checkpoint and the end.
  std::mt19937 rng(20261201);
  const fs::path newest = killed / "checkpoint" / "state.ckpt";
  int kills = 0;
  std::string steps_seen;
  std::string args = kRun + " --out " + killed.string();
  for (int attempt = 0; attempt < 6 && !fs::exists(killed / "summary.json"); ++attempt) {
    const long from = std::max(0L, checkpoint_step(newest));
    const long target = std::uniform_int_distribution<long>(from + 1, from + (400 - from) / 3 + 1)(rng);
    const double pause = std::uniform_real_distribution<double>(0.0, 0.01)(rng);
    if (kill_at_step(args, newest, target, pause)) {
      ++kills;
      steps_seen += (steps_seen.empty() ? "" : ",") + std::to_string(checkpoint_step(newest));
    }
    args = "train --resume " + killed.string();
  }
  const Outcome last = run_p0sim("train --resume " + killed.string());
  CAPTURE(last.err);
  REQUIRE(last.code == 0);
  std::cerr << "kill/resume: " << kills
            << " SIGKILLs at random steps (newest checkpoint step after each: " << steps_seen << "), uninterrupted run "
            << duration << " s\n";
  CHECK(kills >= 5);  // each aimed at a step before the last
  require_same_run(whole, killed);
  // A finished run resumes to nothing.
  const Outcome again = run_p0sim("train --resume " + killed.string());
  CHECK(again.code == 0);
}

TEST_CASE("a corrupt newest checkpoint is refused and the older one used", "[cli][resume]") {
  const fs::path whole = dir("whole2"), broken = dir("broken");
  const std::string small =
      "train --vocab 8 --d-model 16 --heads 2 --d-ff 32 --seq-len 8 --batch 4 --steps 30 "
      "--probe-every 5 --checkpoint-every 4 --seed 2 --out ";
  REQUIRE(run_p0sim(small + whole.string()).code == 0);
  REQUIRE(run_p0sim(small + broken.string()).code == 0);
  // As if killed after the checkpoint at step 30 but before the results: then the newest is torn.
  for (const char* f : {"summary.json", "train.csv", "trace.csv", "heads.csv"}) fs::remove(broken / f);
  fs::remove_all(broken / "weights");
  fs::resize_file(broken / "checkpoint" / "state.ckpt", fs::file_size(broken / "checkpoint" / "state.ckpt") - 100);
  const Outcome o = run_p0sim("train --resume " + broken.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.err.find("warning: passed over") != std::string::npos);
  CHECK(o.err.find("state.ckpt") != std::string::npos);
  CHECK(o.err.find("resuming") != std::string::npos);
  CHECK(o.err.find("at step 28") != std::string::npos);  // the previous checkpoint
  require_same_run(whole, broken);
}

TEST_CASE("a run started on one thread and resumed on two ends with the bytes of a one-thread run", "[cli][resume]") {
  const fs::path whole = dir("whole3"), resumed = dir("resumed3");
  // B * row FLOPs of this config give 5 chunks per step, so two threads really split the step.
  const std::string run =
      "train --vocab 16 --d-model 64 --heads 4 --seq-len 32 --batch 16 --steps 20 --lr 3e-3 "
      "--task firstrecall --probe-every 5 --probe-batch 16 --checkpoint-every 6 --seed 5 --out ";
  REQUIRE(run_p0sim(run + whole.string() + " --threads 1").code == 0);
  REQUIRE(run_p0sim(run + resumed.string() + " --threads 1").code == 0);
  // As if stopped after the checkpoint at step 18: drop the results and the newest checkpoint.
  for (const char* f : {"summary.json", "train.csv", "trace.csv", "heads.csv"}) fs::remove(resumed / f);
  fs::remove_all(resumed / "weights");
  fs::remove(resumed / "checkpoint" / "state.ckpt");
  fs::rename(resumed / "checkpoint" / "state.prev.ckpt", resumed / "checkpoint" / "state.ckpt");
  REQUIRE(checkpoint_step(resumed / "checkpoint" / "state.ckpt") == 18);
  const Outcome o = run_p0sim("train --resume " + resumed.string() + " --threads 2");
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.err.find("at step 18") != std::string::npos);
  require_same_run(whole, resumed);
}

TEST_CASE("a finished constant-schedule run extended with --resume --steps ends with the bytes of a run that long",
          "[cli][resume][extend]") {
  // The old end (step 100) is off the --probe-every grid, so the extension must drop the probe taken there.
  const std::string run =
      "train --vocab 16 --d-model 32 --heads 2 --d-ff 64 --seq-len 16 --batch 8 --lr 3e-3 --warmup 10 "
      "--task firstrecall --triggers 2 --probe-every 15 --probe-batch 16 --checkpoint-every 9 --log-every 1000 "
      "--seed 7 --steps ";
  const fs::path whole = dir("long_whole"), extended = dir("long_extended");
  REQUIRE(run_p0sim(run + "400 --out " + whole.string()).code == 0);
  REQUIRE(run_p0sim(run + "100 --out " + extended.string()).code == 0);

  // Refused, in one line, leaving the finished run as it was: fewer steps, other training options.
  const std::string config = slurp(extended / "config.toml");
  for (const std::string& args : {std::string("--steps 60"), std::string("--steps 400 --lr 1e-3")}) {
    CAPTURE(args);
    const Outcome o = run_p0sim("train --resume " + extended.string() + " " + args);
    CHECK(o.code == 2);
    CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
    CHECK(fs::exists(extended / "summary.json"));
    CHECK(slurp(extended / "config.toml") == config);
  }

  // Extended, killed on the way, then finished by a plain --resume (config.toml now says 400).
  const fs::path newest = extended / "checkpoint" / "state.ckpt";
  const bool killed = kill_at_step("train --resume " + extended.string() + " --steps 400", newest, 200, 0.0);
  CHECK(killed);
  CHECK_FALSE(fs::exists(extended / "summary.json"));
  const Outcome o = run_p0sim("train --resume " + extended.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.err.find("resuming") != std::string::npos);
  require_same_run(whole, extended);
  // Finished at 400: nothing left to do, nothing rewritten.
  const auto finished = fs::last_write_time(extended / "summary.json");
  CHECK(run_p0sim("train --resume " + extended.string()).code == 0);
  CHECK(fs::last_write_time(extended / "summary.json") == finished);
}

TEST_CASE("edge cases of extending end as a run that long: from 0 steps, ablations dropped, resumed at its own end",
          "[cli][resume][extend]") {
  const std::string run =
      "train --vocab 8 --d-model 16 --heads 2 --d-ff 32 --seq-len 8 --batch 4 --probe-every 7 --checkpoint-every 10 "
      "--seed 4 ";
  // A 0-step run holds the step-0 probe already; extended, it must not take it twice.
  const fs::path zero = dir("zero"), ten = dir("ten");
  REQUIRE(run_p0sim(run + "--steps 0 --out " + zero.string()).code == 0);
  REQUIRE(run_p0sim(run + "--steps 10 --out " + ten.string()).code == 0);
  REQUIRE(run_p0sim("train --resume " + zero.string() + " --steps 10").code == 0);
  require_same_run(ten, zero);
  // Ablations leave no fingerprint: an extension without them must not keep the shorter model's.
  const fs::path ablated = dir("ablated"), twenty = dir("twenty");
  REQUIRE(run_p0sim(run + "--steps 10 --ablate --out " + ablated.string()).code == 0);
  REQUIRE(fs::exists(ablated / "ablations.csv"));
  REQUIRE(run_p0sim(run + "--steps 20 --out " + twenty.string()).code == 0);
  REQUIRE(run_p0sim("train --resume " + ablated.string() + " --steps 20 --ablate=false").code == 0);
  require_same_run(twenty, ablated);
  // A run started for 30 steps and cut short after its step-20 checkpoint, finished at 20: the
  // loop has nothing left to run, and the end probe (20 is off the probe grid) is still taken.
  const fs::path cut = dir("cut");
  REQUIRE(run_p0sim(run + "--steps 30 --out " + cut.string()).code == 0);
  drop_results(cut);
  fs::remove(cut / "checkpoint" / "state.ckpt");
  fs::rename(cut / "checkpoint" / "state.prev.ckpt", cut / "checkpoint" / "state.ckpt");
  REQUIRE(checkpoint_step(cut / "checkpoint" / "state.ckpt") == 20);
  REQUIRE(run_p0sim("train --resume " + cut.string() + " --steps 20").code == 0);
  require_same_run(twenty, cut);
}

TEST_CASE("runs that cannot be extended are refused naming the option: a cosine schedule, no final checkpoint",
          "[cli][resume][extend]") {
  const std::string run =
      "train --vocab 8 --d-model 16 --heads 2 --d-ff 32 --seq-len 8 --batch 4 --steps 20 --probe-every 5 --seed 3 ";
  const fs::path cosine = dir("cosine"), unsaved = dir("unsaved");
  REQUIRE(run_p0sim(run + "--schedule cosine --checkpoint-every 5 --out " + cosine.string()).code == 0);
  REQUIRE(run_p0sim(run + "--out " + unsaved.string()).code == 0);
  for (const auto& [where, option, reason] :
       {std::tuple{cosine, "--steps", "cosine schedule"}, std::tuple{unsaved, "--resume", "no checkpoint"}}) {
    CAPTURE(where.string());
    const Outcome o = run_p0sim("train --resume " + where.string() + " --steps 30");
    CHECK(o.code == 2);
    CHECK_THAT(o.err, Catch::Matchers::StartsWith(std::string("p0sim: error: ") + option) &&
                          Catch::Matchers::Contains(reason));
    CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
    CHECK(fs::exists(where / "summary.json"));
  }
}

// --lr 10 on the default config does not diverge: AdamW's normalised update and --clip 1 keep the
// loss finite (about 199 after 1000 steps). --lr 100 does: the decoupled weight decay multiplies
// every matrix by 1 - lr*wd = -9 per step, until the attention scores overflow (step 16).
TEST_CASE("divergence under --lr 100 on the default config: exit 1 naming step, tensor and last checkpoint",
          "[cli][divergence]") {
  const fs::path run = dir("diverge");
  const Outcome o = run_p0sim("train --lr 100 --checkpoint-every 5 --out " + run.string());
  CAPTURE(o.err);
  CHECK(o.code == 1);
  const std::string last_line = o.err.substr(o.err.rfind('\n', o.err.size() - 2) + 1);
  CHECK(last_line.find("training diverged at step ") != std::string::npos);
  CHECK(last_line.find("first non-finite value in the activation of blocks.0.attn") != std::string::npos);
  CHECK(last_line.find("last good checkpoint: step ") != std::string::npos);
  CHECK(last_line.find((run / "checkpoint").string()) != std::string::npos);
  CHECK_FALSE(fs::exists(run / "summary.json"));
  CHECK(fs::exists(run / "checkpoint" / "state.ckpt"));
}

TEST_CASE(
    "an experiment killed mid-run resumes: finished runs kept, the partial one continued, same bytes; "
    "runs kept as records alone resume too",
    "[cli][resume][experiment]") {
  const fs::path cfg = kScratch.root() / "exp.toml";
  std::ofstream(cfg) << tiny_experiment(60, 3);
  const fs::path whole = dir("exp_whole"), killed = dir("exp_killed");
  const std::string base = "experiment --seeds 2 --threads 1 --config " + cfg.string() + " --out ";
  REQUIRE(run_p0sim(base + whole.string()).code == 0);
  // Jobs run seed-major (main/seed-0, bidir/seed-0, main/seed-1, bidir/seed-1): kill inside main/seed-1.
  REQUIRE(
      kill_at_step(base + killed.string(), killed / "runs" / "main" / "seed-1" / "checkpoint" / "state.ckpt", 20, 0.0));
  CHECK(fs::exists(killed / "runs" / "main" / "seed-0" / "summary.json"));
  CHECK_FALSE(fs::exists(killed / "runs" / "main" / "seed-1" / "summary.json"));
  CHECK_FALSE(fs::exists(killed / "results.csv"));
  const Outcome refused = run_p0sim(base + killed.string());
  CHECK(refused.code == 2);
  CHECK(refused.err.find("--resume") != std::string::npos);
  const auto seed0_mtime = fs::last_write_time(killed / "runs" / "main" / "seed-0" / "summary.json");
  const Outcome resumed = run_p0sim("experiment --seeds 2 --resume --out " + killed.string());
  CAPTURE(resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(fs::last_write_time(killed / "runs" / "main" / "seed-0" / "summary.json") == seed0_mtime);  // not retrained
  // The log names the runs that train: the partial one at its checkpoint's step, the untouched
  // one from the start, the finished ones not at all.
  std::smatch at;
  REQUIRE(std::regex_search(resumed.err, at, std::regex(R"(\[start\] main seed-1 resumed at step (\d+) of 60\n)")));
  CHECK(std::stoi(at[1]) >= 20);
  CHECK(std::stoi(at[1]) % 3 == 0);  // checkpoint-every = 3
  CHECK_THAT(resumed.err, Catch::Matchers::Contains("[start] bidir seed-1 started (60 steps)\n"));
  CHECK_THAT(resumed.err, !Catch::Matchers::Contains("main seed-0 started") &&
                              !Catch::Matchers::Contains("bidir seed-0 started") &&
                              !Catch::Matchers::Contains("seed-0 resumed"));
  CHECK(slurp(whole / "results.csv") == slurp(killed / "results.csv"));
  CHECK(slurp(whole / "verdict.json") == slurp(killed / "verdict.json"));
  for (const char* run : {"main/seed-0", "main/seed-1", "bidir/seed-0", "bidir/seed-1"}) {
    CAPTURE(run);
    require_same_run(whole / "runs" / run, killed / "runs" / run);
  }

  // Runs kept without checkpoint/ and weights/ (as a study commits them) are finished runs: their
  // records rebuild the same results without training again.
  const fs::path kept = dir("exp_kept");
  fs::copy(whole, kept, fs::copy_options::recursive);
  const fs::path record = kept / "runs" / "main" / "seed-0" / "record.ckpt";
  const std::string record_bytes = slurp(record);
  for (const char* run : {"main/seed-0", "main/seed-1", "bidir/seed-0", "bidir/seed-1"}) {
    REQUIRE(fs::remove_all(kept / "runs" / run / "checkpoint") > 0);
    REQUIRE(fs::remove_all(kept / "runs" / run / "weights") > 0);
  }
  fs::remove(kept / "results.csv");
  fs::remove(kept / "verdict.json");
  const Outcome from_records = run_p0sim("experiment --seeds 2 --resume --out " + kept.string());
  CAPTURE(from_records.err);
  REQUIRE(from_records.code == 0);
  CHECK_FALSE(fs::exists(kept / "runs" / "main" / "seed-0" / "checkpoint"));
  CHECK(slurp(whole / "results.csv") == slurp(kept / "results.csv"));
  CHECK(slurp(whole / "verdict.json") == slurp(kept / "verdict.json"));

  // A run finished before records existed gets one, the same bytes, from its final checkpoint.
  const fs::path old_run = killed / "runs" / "main" / "seed-0";
  const std::string old_record = slurp(old_run / "record.ckpt");
  REQUIRE(fs::remove(old_run / "record.ckpt"));
  REQUIRE(run_p0sim("experiment --seeds 2 --resume --out " + killed.string()).code == 0);
  CHECK(slurp(old_run / "record.ckpt") == old_record);

  // A damaged record is refused in one line naming it, not retrained over.
  std::string damaged = record_bytes;
  damaged[damaged.size() / 2] ^= 0x5a;
  std::ofstream(record, std::ios::binary | std::ios::trunc) << damaged;
  const Outcome refused_record = run_p0sim("experiment --seeds 2 --resume --out " + kept.string());
  CHECK(refused_record.code == 2);
  CHECK_THAT(refused_record.err, Catch::Matchers::Contains("--resume") && Catch::Matchers::Contains("record.ckpt") &&
                                     Catch::Matchers::Contains("checksum"));
  CHECK(std::count(refused_record.err.begin(), refused_record.err.end(), '\n') == 1);
}

TEST_CASE(
    "an experiment extended with --resume --steps gives the results of one trained that long; fewer steps refused",
    "[cli][resume][experiment][extend]") {
  const fs::path cfg = kScratch.root() / "exp_extend.toml";
  // bidir sets its own steps: --steps overrides it too.
  std::ofstream(cfg) << tiny_experiment(30, 7, "steps = 25\n");
  const fs::path whole = dir("exp_long"), extended = dir("exp_extended");
  const std::string base = "experiment --seeds 2 --threads 2 --config " + cfg.string() + " --out ";
  REQUIRE(run_p0sim(base + whole.string() + " --steps 50").code == 0);
  REQUIRE(run_p0sim(base + extended.string()).code == 0);
  const Outcome o = run_p0sim("experiment --resume --steps 50 --out " + extended.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  CHECK_THAT(o.err, Catch::Matchers::Contains("[start] main seed-1 resumed at step 30 of 50") &&
                        Catch::Matchers::Contains("[start] bidir seed-0 resumed at step 25 of 50"));
  CHECK(slurp(whole / "experiment.toml") == slurp(extended / "experiment.toml"));
  CHECK(slurp(whole / "results.csv") == slurp(extended / "results.csv"));
  CHECK(slurp(whole / "verdict.json") == slurp(extended / "verdict.json"));
  for (const char* run : {"main/seed-0", "main/seed-1", "bidir/seed-0", "bidir/seed-1"}) {
    CAPTURE(run);
    require_same_run(whole / "runs" / run, extended / "runs" / run);
  }
  // Cut short after a run's new record and before its files: resumed, it writes them from its checkpoint.
  drop_results(extended / "runs" / "main" / "seed-1");
  const Outcome again = run_p0sim("experiment --resume --out " + extended.string());
  CAPTURE(again.err);
  REQUIRE(again.code == 0);
  require_same_run(whole / "runs" / "main" / "seed-1", extended / "runs" / "main" / "seed-1");
  // The experiment's own --config is accepted back once it has been extended.
  CHECK(run_p0sim("experiment --resume --steps 50 --config " + cfg.string() + " --out " + extended.string()).code == 0);
  const Outcome fewer = run_p0sim("experiment --resume --steps 40 --out " + extended.string());
  CHECK(fewer.code == 2);
  CHECK_THAT(fewer.err,
             Catch::Matchers::StartsWith("p0sim: error: --steps") && Catch::Matchers::Contains("never shortens"));
  CHECK(slurp(whole / "experiment.toml") == slurp(extended / "experiment.toml"));
}

}  // namespace cli_train_resume_test
