// The CI-sized firstrecall run: a causal NoPE/no-BOS model finds position 0 through the
// causal mask alone; the prefix-bidirectional control, which has no asymmetry, cannot beat a
// bag-of-tokens guess.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/train.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_firstrecall_learns_test {

namespace fs = std::filesystem;
using namespace p0sim::sim;

namespace {

// Measured on the shared 2-core machine: about 0.7 s per causal run, 4.7 s for the control
// (prefix-bidirectional costs about T forward passes per row).
TrainConfig small_firstrecall(std::uint64_t seed, Mask mask) {
  TrainConfig c;
  c.model.vocab = c.data.vocab = 16;
  c.model.seq_len = c.data.seq_len = 16;
  c.model.d_model = 32;
  c.model.heads = 2;
  c.model.layers = 2;
  c.model.d_ff = 128;
  c.model.mask = mask;
  c.data.task = Task::firstrecall;
  c.data.triggers = 2;
  c.data.trigger_prob = 0.15;
  c.batch = 32;
  c.steps = 300;
  c.lr = 3e-3;
  c.optim.weight_decay = 0.1;
  c.clip = 1.0;
  c.seed = seed;
  c.probe.every = 100;
  c.probe.batch = 256;
  return c;
}

// Attention of the copy: the largest, over the heads of the last layer (layer 1, the layer that can
// read what layer 0 wrote about position 0), of the attention to key 0 averaged over trigger queries.
double copy_head_attention(const ProbeRecord& r) {
  double best = 0.0;
  for (const HeadAttention& h : r.layers.back().heads) best = std::max(best, h.attn_to_0_active);
  return best;
}

// Chance level at the first trigger for a model that cannot tell which position is 0.
// Under prefix-bidirectional NoPE attention the prediction at t is a function of x_t and of the
// multiset {x_0..x_t} only (permuting the prefix permutes nothing the model can see). At a first
// trigger with x_0 a filler, x_0..x_{t-1} are i.i.d. uniform fillers, exchangeable, so given the
// multiset P(x_0 = j) = count_j / t: no such model beats b_i = max_j count_j / t on row i. When x_0
// is a trigger it is the only trigger before t, so b_i = 1. The number of hits is a sum of
// independent Bernoulli(p_i <= b_i) (probe rows are independent of training).
struct Chance {
  double mean = 0.0;  // sum b_i / n
  double sd = 0.0;    // sqrt(sum b_i (1 - b_i)) / n: the spread of the accuracy
  long n = 0;
};
Chance first_trigger_chance(const TrainConfig& c) {
  DataConfig d = c.data;
  d.seed = c.seed;  // as train() does
  const DataGenerator gen(d);
  const int N = c.probe.batch, T = d.seq_len, row_len = T + 1;
  std::vector<std::int32_t> rows(static_cast<std::size_t>(N * row_len));
  std::vector<Kind> kinds(static_cast<std::size_t>(N * T));
  gen.fill(1, 0, N, rows.data(), kinds.data());  // the probe batch
  Chance ch;
  double var = 0.0;
  for (int n = 0; n < N; ++n)
    for (int t = 0; t < T; ++t) {
      if (kinds[static_cast<std::size_t>(n * T + t)] != Kind::first) continue;
      std::vector<int> count(static_cast<std::size_t>(d.vocab), 0);
      for (int s = 0; s < t; ++s) ++count[static_cast<std::size_t>(rows[static_cast<std::size_t>(n * row_len + s)])];
      const bool x0_trigger = rows[static_cast<std::size_t>(n * row_len)] >= d.vocab - d.triggers;
      const double b = x0_trigger ? 1.0 : static_cast<double>(*std::max_element(count.begin(), count.end())) / t;
      ch.mean += b;
      var += b * (1.0 - b);
      ++ch.n;
    }
  ch.mean /= static_cast<double>(ch.n);
  ch.sd = std::sqrt(var) / static_cast<double>(ch.n);
  return ch;
}

// One-sided z for a 0.001 level: a correct model exceeds chance + kZ * sd about once in 1000 seeds.
constexpr double kZ = 3.09;

}  // namespace

TEST_CASE("causal mask alone lets a NoPE no-BOS model find position 0 and copy it", "[firstrecall][slow]") {
  const auto seed = GENERATE(std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3});
  CAPTURE(seed);
  const TrainConfig c = small_firstrecall(seed, Mask::causal);
  Model<float> model(c.model, c.batch);
  const TrainResult r = train(model, c);
  const ProbeRecord& last = r.probes.back();
  const Chance chance = first_trigger_chance(c);
  CAPTURE(last.accuracy, last.first_accuracy, last.first_scored, copy_head_attention(last), chance.mean);
  REQUIRE(last.first_scored == chance.n);
  CHECK(last.accuracy >= 0.9);
  CHECK(last.first_accuracy >= 0.9);
  CHECK(last.first_accuracy > chance.mean + kZ * chance.sd);  // beats any bag-of-tokens guess
  CHECK(copy_head_attention(last) >= 0.5);
  CHECK(r.emergence.identification.has_value());

  if (seed == 1) {  // the run directory carries the probes
    const fs::path dir = fs::temp_directory_path() / ("p0sim_firstrecall_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    write_run(dir, model, c, r);
    const auto s = nlohmann::json::parse(std::ifstream(dir / "summary.json"));
    CHECK(s.at("task_accuracy").get<double>() == last.accuracy);
    CHECK(s.at("first_trigger_accuracy").get<double>() == last.first_accuracy);
    CHECK(s.at("probe").at("emergence").at("identification").get<int>() == *r.emergence.identification);
    CHECK(s.at("probe").at("stage_history").size() == r.probes.size());
    std::ifstream trace(dir / "trace.csv"), heads(dir / "heads.csv");
    const auto lines = [](std::ifstream& f) { return std::count(std::istreambuf_iterator<char>(f), {}, '\n'); };
    CHECK(lines(trace) == 1 + static_cast<long>(r.probes.size()) * c.model.layers);
    CHECK(lines(heads) == 1 + static_cast<long>(r.probes.size()) * c.model.layers * c.model.heads);
    fs::remove_all(dir);
  }
}

TEST_CASE("without the causal asymmetry the first trigger stays at bag-of-tokens chance", "[firstrecall][slow]") {
  const TrainConfig c = small_firstrecall(1, Mask::prefix_bidirectional);
  Model<float> model(c.model, c.batch);
  const TrainResult r = train(model, c);
  const ProbeRecord& last = r.probes.back();
  const Chance chance = first_trigger_chance(c);
  CAPTURE(last.accuracy, last.first_accuracy, chance.mean, chance.sd, chance.n, copy_head_attention(last));
  REQUIRE(chance.n >= 100);
  CHECK(last.first_accuracy <= chance.mean + kZ * chance.sd);
  CHECK(last.first_accuracy < 0.9);
  CHECK_FALSE(r.emergence.identification.has_value());
}

}  // namespace sim_firstrecall_learns_test
