// `p0sim train` and `p0sim eval` through the binary: reproducibility, config replay, the eval
// round trip, and one-line exit-2 errors for bad input.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/test_support.hpp"
#include "sim/npy.hpp"
#include "sim/train.hpp"
#include "tests/sim_tiny_config.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace cli_sim_train_eval_test {

namespace fs = std::filesystem;
using namespace p0sim::sim;

namespace {

const p0sim::test::ScratchRoot kScratch("p0sim_cli_sim_");

using p0sim::test::Outcome;
using p0sim::test::slurp;

Outcome run_p0sim(const std::string& args) {
  return p0sim::test::run_shell(kScratch, std::string(P0SIM_BINARY) + " " + args);
}

const std::string kTiny =
    "train --vocab 8 --d-model 16 --heads 2 --d-ff 32 --seq-len 8 --batch 4 --steps 12 --lr 3e-3 --warmup 2 "
    "--schedule cosine --clip 0.5 --task backcopy --triggers 2 --markov-alpha 0.3 --seed 5";

fs::path dir(const std::string& name) {
  const fs::path d = kScratch.root() / name;
  fs::remove_all(d);
  return d;
}

void require_same_weights(const fs::path& a, const fs::path& b) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(a / "weights")) {
    CAPTURE(e.path().filename().string());
    REQUIRE(slurp(e.path()) == slurp(b / "weights" / e.path().filename()));
    ++files;
  }
  REQUIRE(files >= 20);  // 8 tensors per block x 2, tok_emb, norm_f, lm_head, config.json at least
  REQUIRE(files == std::distance(fs::directory_iterator(b / "weights"), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("train writes bit-identical weights for the same seed, with any --threads", "[cli][train]") {
  const fs::path a = dir("a"), b = dir("b"), c = dir("c");
  const Outcome first = run_p0sim(kTiny + " --threads 1 --out " + a.string());
  REQUIRE(first.code == 0);
  // stderr is not a terminal here: plain progress lines, the last step always included.
  CHECK(first.err.find("step 12/12 loss ") != std::string::npos);
  CHECK(first.err.find("tokens/s") != std::string::npos);
  const Outcome second = run_p0sim(kTiny + " --threads 2 --log-every 4 --out " + b.string());
  REQUIRE(second.code == 0);
  CHECK(std::count(second.err.begin(), second.err.end(), '\n') == 3);  // steps 4, 8, 12
  require_same_weights(a, b);
  for (const char* f : {"config.toml", "train.csv", "summary.json", "weights/config.json"}) CHECK(fs::exists(a / f));
  const auto summary = nlohmann::json::parse(slurp(a / "summary.json"));
  CHECK(summary.at("steps") == 12);
  CHECK(summary.at("config").at("task") == "backcopy");
  CHECK(summary.at("entropy_floor").get<double>() > 0.0);
  // A different seed gives different weights (so the comparison above can fail).
  REQUIRE(run_p0sim(std::regex_replace(kTiny, std::regex("--seed 5"), "--seed 6") + " --out " + c.string()).code == 0);
  CHECK(slurp(a / "weights/lm_head.npy") != slurp(c / "weights/lm_head.npy"));
  // train.csv: a header and one row per step.
  std::ifstream csv(a / "train.csv");
  std::string line;
  std::getline(csv, line);
  CHECK(line == "step,loss,lr,grad_norm,tokens_per_s");
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 12);
}

TEST_CASE("config.toml given back to --config reproduces the run bit-identically", "[cli][train]") {
  const fs::path a = dir("cfg_a"), b = dir("cfg_b");
  REQUIRE(run_p0sim(kTiny + " --pos rope --bos --norm layer --out " + a.string()).code == 0);
  const std::string toml = slurp(a / "config.toml");
  CHECK(toml.find("out =") == std::string::npos);  // replaying must not target the old directory
  REQUIRE(run_p0sim("train --config " + (a / "config.toml").string() + " --out " + b.string()).code == 0);
  require_same_weights(a, b);
  CHECK(slurp(b / "config.toml") == toml);
}

TEST_CASE("eval on train's weights reproduces the trained model's logits bit for bit", "[cli][eval]") {
  const fs::path run = dir("run"), out = dir("eval");
  REQUIRE(run_p0sim(kTiny + " --out " + run.string()).code == 0);

  // The same run in memory: the same code, seed and config give the same weights.
  TrainConfig c = p0sim::test::tiny_train_config(Task::backcopy);
  c.steps = 12;
  c.warmup = 2;
  c.schedule = Schedule::cosine;
  c.clip = 0.5;
  c.data.markov_alpha = 0.3;
  c.seed = 5;
  const int N = 5;
  Model<float> model(c.model, std::max(N, c.batch));
  train(model, c);

  std::vector<std::int32_t> rows(static_cast<std::size_t>(N) * 9);
  DataGenerator(c.data).fill(3, 0, N, rows.data());
  const fs::path tokens = kScratch.root() / "tokens.npy";
  write_npy(tokens, rows.data(), {N, 9});
  REQUIRE(run_p0sim("eval --weights " + (run / "weights").string() + " --tokens " + tokens.string() +
                    " --grads --out " + out.string())
              .code == 0);

  const double loss = model.forward(rows.data(), N);
  const auto logits = read_npy(out / "logits.npy");
  REQUIRE(logits.shape == std::vector<std::int64_t>{N, 8, 8});
  REQUIRE(std::memcmp(logits.bytes.data(), model.logits(), logits.bytes.size()) == 0);
  CHECK(nlohmann::json::parse(slurp(out / "loss.json")).at("loss").get<double>() == loss);
  CHECK(read_npy(out / "hidden.npy").shape == std::vector<std::int64_t>{3, N, 8, 16});
  CHECK(read_npy(out / "attn.npy").shape == std::vector<std::int64_t>{2, N, 2, 8, 8});
  model.zero_grad();
  model.backward();
  const auto& wq = model.tensor("blocks.1.attn.wq");
  const auto g = read_npy(out / "grads/blocks.1.attn.wq.npy");
  REQUIRE(g.shape == std::vector<std::int64_t>{16, 16});
  CHECK(std::memcmp(g.bytes.data(), model.grads().data() + wq.offset, g.bytes.size()) == 0);
}

TEST_CASE("bad input exits 2 with one line naming the option", "[cli]") {
  const fs::path run = dir("bad_run");
  REQUIRE(run_p0sim(kTiny + " --out " + run.string()).code == 0);
  const fs::path toks = kScratch.root() / "ok_tokens.npy";
  std::vector<std::int32_t> ok(2 * 9, 1), high(2 * 9, 1);
  high[13] = 8;
  write_npy(toks, ok.data(), {2, 9});
  write_npy(kScratch.root() / "high_tokens.npy", high.data(), {2, 9});
  std::vector<float> fl(2 * 9, 1.0f);
  write_npy(kScratch.root() / "float_tokens.npy", fl.data(), {2, 9});
  // Broken weight directories.
  const fs::path missing = dir("w_missing"), shaped = dir("w_shaped"), badcfg = dir("w_cfg");
  for (const auto& d : {missing, shaped, badcfg}) fs::copy(run / "weights", d);
  fs::remove(missing / "norm_f.weight.npy");
  write_npy(shaped / "lm_head.npy", fl.data(), {2, 9});
  std::ofstream(badcfg / "config.json") << "{ not json";
  // Defaults elsewhere (V=64, C=64, H=4, T=32): each case fails validation before any work.
  const std::string tr = "train --steps 1 --out " + dir("fresh").string();
  const std::string ev = "eval --out " + dir("ev").string() + " --weights ";

  auto [args, option] = GENERATE_COPY(table<std::string, std::string>({
      {tr + " --heads 3", "--heads"},
      {tr + " --d-model 12 --heads 4 --pos rope", "--pos"},
      {tr + " --seq-len 1", "--seq-len"},
      {tr + " --vocab 1", "--vocab"},
      {tr + " --task backcopy --triggers 64", "--triggers"},
      {tr + " --lr 0", "--lr"},
      {tr + " --lr -1e-3", "--lr"},
      {tr + " --lr nan", "--lr"},
      {tr + " --lr inf", "--lr"},
      {tr + " --markov-alpha 0", "--markov-alpha"},
      {tr + " --task copy", "--task"},
      {"train --steps 1 --out /nonexistent_p0sim_dir/run", "--out"},
      {"train --steps 1", "--out"},
      {"train --steps 1 --out " + run.string(), "--out"},  // not empty, no --force
      {ev + (run / "weights").string() + " --tokens " + (kScratch.root() / "high_tokens.npy").string(), "--tokens"},
      {ev + (run / "weights").string() + " --tokens " + (kScratch.root() / "float_tokens.npy").string(), "--tokens"},
      {ev + (run / "weights").string() + " --tokens " + (kScratch.root() / "none.npy").string(), "--tokens"},
      {ev + missing.string() + " --tokens " + toks.string(), "--weights"},
      {ev + shaped.string() + " --tokens " + toks.string(), "--weights"},
      {ev + badcfg.string() + " --tokens " + toks.string(), "--weights"},
      {"eval --tokens " + toks.string() + " --out " + dir("ev2").string(), "--weights"},
  }));
  CAPTURE(args);
  const Outcome o = run_p0sim(args);
  CAPTURE(o.err);
  CHECK(o.code == 2);
  CHECK(o.err.find(option) != std::string::npos);
  CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
}

}  // namespace cli_sim_train_eval_test
