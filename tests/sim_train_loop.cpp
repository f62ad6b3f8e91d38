// The training loop, its schedule, and the weights/eval round trip at the library level.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/test_support.hpp"
#include "common/errors.hpp"
#include "sim/npy.hpp"
#include "sim/train.hpp"
#include "tests/sim_tiny_config.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_train_loop_test {

namespace fs = std::filesystem;
using namespace p0sim::sim;

namespace {

TrainConfig tiny(Task task = Task::markov) {
  TrainConfig c = p0sim::test::tiny_train_config(task);
  c.steps = 15;
  c.warmup = 3;
  c.schedule = Schedule::cosine;
  c.clip = 0.5;
  c.seed = 11;
  return c;
}

const p0sim::test::ScratchRoot kScratch("p0sim_train_test_");

fs::path scratch(const std::string& name) { return kScratch.fresh_dir(name); }

bool same_bits(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace

TEST_CASE("the same seed and config give bit-identical weights", "[train]") {
  auto task = GENERATE(Task::markov, Task::backcopy, Task::uniform, Task::repeat);
  CAPTURE(p0sim::enum_name(task));
  const TrainConfig c = tiny(task);
  Model<float> a(c.model, c.batch), b(c.model, c.batch);
  const auto ra = train(a, c), rb = train(b, c);
  REQUIRE(ra.log.size() == 15);
  REQUIRE(same_bits(a.params().data(), b.params().data(), static_cast<std::size_t>(a.params().size())));
  REQUIRE(ra.final_loss == rb.final_loss);
  TrainConfig other = c;
  other.seed = 12;
  Model<float> m(c.model, c.batch);
  train(m, other);
  CHECK_FALSE(same_bits(a.params().data(), m.params().data(), static_cast<std::size_t>(a.params().size())));
}

TEST_CASE("learning rate warms up linearly, then stays or follows a half cosine to 0 at --steps", "[train]") {
  TrainConfig c;
  c.lr = 0.5;
  c.steps = 10;
  c.warmup = 4;
  for (int s = 0; s < 4; ++s) CHECK_THAT(learning_rate(c, s), Catch::Matchers::WithinRel(0.5 * (s + 1) / 4.0, 1e-15));
  CHECK(learning_rate(c, 9) == 0.5);
  c.schedule = Schedule::cosine;
  CHECK(learning_rate(c, 4) == 0.5);
  CHECK_THAT(learning_rate(c, 7), Catch::Matchers::WithinRel(0.25, 1e-12));  // halfway through 6 decay steps
  CHECK(learning_rate(c, 9) > 0.0);
  CHECK_THAT(learning_rate(c, 10), Catch::Matchers::WithinAbs(0.0, 1e-16));
}

TEST_CASE("training lowers the loss toward the task's entropy floor", "[train]") {
  TrainConfig c = tiny(Task::markov);
  c.steps = 300;
  c.schedule = Schedule::constant;
  c.clip = 1.0;
  c.lr = 1e-2;
  c.batch = 16;
  Model<float> m(c.model, c.batch);
  const auto r = train(m, c);
  double last = 0.0;
  for (int s = 280; s < 300; ++s) last += r.log[static_cast<std::size_t>(s)].loss / 20;
  const double first = r.log[0].loss;
  CAPTURE(first, last, r.entropy_floor);
  // N(0, 0.02^2) weights predict ~uniformly (loss ~ ln 8 = 2.08): logits have std ~ 0.02 sqrt(C)
  // = 0.08, and with only 8 token ids their offsets do not average out over the batch, so allow
  // 0.15. A learned bigram reaches the floor; a 20-step mean at batch 16 x 8 tokens fluctuates by
  // a few hundredths.
  CHECK_THAT(first, Catch::Matchers::WithinAbs(std::log(8.0), 0.15));
  CHECK(last < r.entropy_floor + 0.25);
  CHECK(last > r.entropy_floor - 0.1);
}

TEST_CASE("a loss that stops being finite ends the run with a run error", "[train]") {
  TrainConfig c = tiny();
  c.lr = 1e30;
  c.clip = 0.0;
  c.steps = 50;
  Model<float> m(c.model, c.batch);
  REQUIRE_THROWS_AS(train(m, c), p0sim::RunError);
}

TEST_CASE("bad training configs are rejected naming the configuration field", "[train]") {
  TrainConfig c = tiny();
  c.lr = 0.0;
  REQUIRE_THROWS_WITH(validate(c), Catch::Contains("lr: "));
  c.lr = std::nan("");
  REQUIRE_THROWS_WITH(validate(c), Catch::Contains("lr: "));
  c = tiny();
  c.batch = 0;
  REQUIRE_THROWS_WITH(validate(c), Catch::Contains("batch: "));
  c = tiny(Task::backcopy);
  c.data.triggers = 8;
  REQUIRE_THROWS_WITH(validate(c), Catch::Contains("triggers: "));
}

TEST_CASE("weights written by a run load back into an identical model", "[train][eval]") {
  auto [pos, bos, norm] = GENERATE(table<PosEnc, bool, Norm>({
      {PosEnc::none, false, Norm::rms},
      {PosEnc::absolute, true, Norm::layer},
      {PosEnc::rope, false, Norm::rms},
  }));
  CAPTURE(p0sim::enum_name(pos), bos, p0sim::enum_name(norm));
  TrainConfig c = tiny();
  c.model.pos = pos;
  c.model.bos = bos;
  c.model.norm = norm;
  const int N = 7;
  Model<float> trained(c.model, N);
  train(trained, c);
  const fs::path dir = scratch("weights");
  write_weights(dir, trained);

  const LoadedWeights w = load_weights(dir, "--weights");
  CHECK(to_json(w.config) == to_json(c.model));
  Model<float> loaded(w.config, N);
  loaded.params() = Eigen::Map<const Eigen::VectorXf>(w.params.data(), static_cast<Eigen::Index>(w.params.size()));
  REQUIRE(same_bits(loaded.params().data(), trained.params().data(), w.params.size()));

  std::vector<std::int32_t> rows(static_cast<std::size_t>(N) * 9);
  DataGenerator(c.data).fill(5, 0, N, rows.data());
  const float loss_a = trained.forward(rows.data(), N), loss_b = loaded.forward(rows.data(), N);
  CHECK(loss_a == loss_b);
  const auto n_logits = static_cast<std::size_t>(N) * c.model.positions() * c.model.vocab;
  CHECK(same_bits(trained.logits(), loaded.logits(), n_logits));

  // evaluate() in one chunk is the model's own forward and backward.
  const EvalResult one = evaluate(loaded, rows.data(), N, true);
  CHECK(one.loss == static_cast<double>(loss_a));
  CHECK(same_bits(one.logits.data(), trained.logits(), n_logits));
  trained.zero_grad();
  trained.backward();
  CHECK(same_bits(one.grads.data(), trained.grads().data(), one.grads.size()));

  // In chunks of 3 rows (3+3+1) the loss and gradient are still those of the mean over all
  // N*P predictions: the last, smaller chunk weighs 1/7, not 1/3. Chunks change the GEMM shapes,
  // so agreement is to float rounding (relative 1e-5), not bitwise.
  Model<float> chunked(w.config, 3);
  chunked.params() = loaded.params();
  const EvalResult three = evaluate(chunked, rows.data(), N, true);
  CHECK_THAT(three.loss, Catch::Matchers::WithinRel(one.loss, 1e-6));
  double diff = 0.0, scale = 0.0;
  for (std::size_t k = 0; k < one.grads.size(); ++k) {
    diff = std::max(diff, std::fabs(static_cast<double>(three.grads[k]) - one.grads[k]));
    scale = std::max(scale, std::fabs(static_cast<double>(one.grads[k])));
  }
  CHECK(diff <= 1e-5 * scale);
  for (std::size_t k = 0; k < one.logits.size(); ++k)
    REQUIRE_THAT(three.logits[k], Catch::Matchers::WithinAbs(one.logits[k], 1e-5));
  const auto n_attn = one.attention.size();
  for (std::size_t k = 0; k < n_attn; ++k)
    REQUIRE_THAT(three.attention[k], Catch::Matchers::WithinAbs(one.attention[k], 1e-6));
  // hidden[l] for the last row sits where (L+1,N,P,C) says.
  const std::size_t PC = static_cast<std::size_t>(c.model.positions()) * 16;
  CHECK(same_bits(one.hidden.data() + (2 * N + 6) * PC, trained.hidden(2) + 6 * PC, PC));
}

TEST_CASE("loading weights rejects a missing or mis-shaped tensor and a bad config.json", "[train][eval]") {
  TrainConfig c = tiny();
  Model<float> m(c.model, 1);
  m.init(1);
  const fs::path dir = scratch("bad_weights");
  write_weights(dir, m);
  std::vector<float> wrong(8 * 15, 0.0f);
  SECTION("missing tensor") {
    fs::remove(dir / "blocks.1.mlp.w2.npy");
    REQUIRE_THROWS_WITH(load_weights(dir, "--weights"),
                        Catch::Contains("--weights") && Catch::Contains("blocks.1.mlp.w2.npy"));
  }
  SECTION("mis-shaped tensor") {
    write_npy(dir / "tok_emb.npy", wrong.data(), {8, 15});
    REQUIRE_THROWS_WITH(load_weights(dir, "--weights"), Catch::Contains("--weights") && Catch::Contains("(8,16)"));
  }
  SECTION("config.json with an invalid model") {
    std::ofstream(dir / "config.json") << R"({"vocab": 8, "d_model": 16, "heads": 3, "layers": 2, "d_ff": 32,
      "seq_len": 8, "mask": "causal", "attn": "softmax", "pos": "none", "bos": false, "norm": "rms", "act": "gelu"})";
    REQUIRE_THROWS_WITH(load_weights(dir, "--weights"), Catch::Contains("--weights") && Catch::Contains("heads: "));
  }
  SECTION("config.json that is not JSON or lacks keys") {
    std::ofstream(dir / "config.json") << "{\"vocab\": 8";
    REQUIRE_THROWS_WITH(load_weights(dir, "--weights"), Catch::Contains("--weights"));
    std::ofstream(dir / "config.json") << "{\"vocab\": 8}";
    REQUIRE_THROWS_AS(load_weights(dir, "--weights"), p0sim::UsageError);
  }
  SECTION("absolute positions fix the sequence length") {
    REQUIRE_NOTHROW(load_weights(dir, "--weights", 12));  // NoPE runs on any T
    TrainConfig a = tiny();
    a.model.pos = PosEnc::absolute;
    Model<float> ma(a.model, 1);
    ma.init(1);
    const fs::path adir = scratch("abs_weights");
    write_weights(adir, ma);
    REQUIRE_THROWS_WITH(load_weights(adir, "--weights", 12), Catch::Contains("seq_len: "));
  }
}

}  // namespace sim_train_loop_test
