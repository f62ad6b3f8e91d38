// The checkpoint fingerprint comes from the option table: an option marked `fingerprint` changes
// it, any other does not, and an option left out of it really does not change what a run
// records while it trains (so resuming under another value of it is safe).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/engine_version.hpp"
#include "common/errors.hpp"
#include "common/format.hpp"
#include "sim/checkpoint.hpp"
#include "sim/model.hpp"
#include "study/run_options.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace study_checkpoint_fingerprint_test {

using namespace p0sim;
using study::OptionType;
using study::OptionValues;
using study::RunOption;

namespace {

// An accepted value of `o` other than `text`, as far from it as the range allows (a threshold moved
// to its bound changes what it decides, where a small step might not).
std::string other_value(const RunOption& o, const std::string& text) {
  std::vector<std::string> candidates;
  switch (o.type) {
    case OptionType::flag:
      return text == "true" ? "false" : "true";
    case OptionType::name:
      candidates = o.names;
      break;
    case OptionType::unsigned64:
      candidates = {"2", "3"};
      break;
    case OptionType::path:
      candidates = {"/nonexistent/corpus", "/usr/share/games/fortunes/art"};
      break;
    case OptionType::integer:
    case OptionType::real: {
      const double v = std::stod(text);
      for (double c : {o.max, o.min, v + 1, v - 1, v / 2, v * 2})
        candidates.push_back(o.type == OptionType::integer ? std::to_string(static_cast<long long>(c))
                                                           : fmt_shortest(c));
      break;
    }
  }
  for (const std::string& c : candidates)
    if (c != text && o.check(c).empty()) return c;
  FAIL("no other accepted value for --" << o.name);
  return text;
}

// A run small enough to train in a blink, probed every step so the probe records are compared too.
OptionValues tiny_run() {
  OptionValues v;
  for (const auto& [k, t] : std::vector<std::pair<std::string, std::string>>{{"vocab", "8"},
                                                                             {"d-model", "8"},
                                                                             {"heads", "2"},
                                                                             {"layers", "2"},
                                                                             {"seq-len", "6"},
                                                                             {"batch", "4"},
                                                                             {"steps", "4"},
                                                                             {"probe-every", "1"},
                                                                             {"probe-batch", "4"},
                                                                             {"task", "firstrecall"},
                                                                             {"triggers", "2"}})
    v.set(k, t, "test");
  return v;
}

// The state a run ends with, as its final checkpoint holds it.
sim::TrainState final_state(const OptionValues& v) {
  const study::RunSpec spec = v.spec();
  sim::Model<float> model(spec.train.model, spec.train.batch);
  sim::TrainState last;
  sim::TrainControl control;
  control.checkpoint_every = spec.checkpoint_every;
  control.checkpoint_at_end = true;
  control.save_checkpoint = [&](const sim::TrainState& st) { last = st; };
  sim::train(model, spec.train, control);
  return last;
}

}  // namespace

TEST_CASE("an option changes the checkpoint fingerprint exactly when the table marks it", "[study][checkpoint]") {
  const auto& table = study::run_options();
  const std::size_t i = GENERATE_COPY(range(std::size_t{0}, table.size()));
  const RunOption& o = table[i];
  OptionValues changed = tiny_run();
  const std::string before = changed.checkpoint_fingerprint();
  changed.set(o.name, other_value(o, changed.get(o.name)), "test");
  INFO("--" << o.name << " = " << changed.get(o.name));
  CHECK((changed.checkpoint_fingerprint() != before) == o.fingerprint);
}

TEST_CASE("the fingerprint compares values, not how they were written", "[study][checkpoint]") {
  OptionValues a = tiny_run(), b = tiny_run();
  a.set("lr", "0.001", "test");
  b.set("lr", "1e-3", "test");
  CHECK(a.checkpoint_fingerprint() == b.checkpoint_fingerprint());
  b.set("lr", "0.0011", "test");
  CHECK(a.checkpoint_fingerprint() != b.checkpoint_fingerprint());
}

TEST_CASE("an option left out of the fingerprint does not change what a run records while it trains",
          "[study][checkpoint]") {
  const sim::TrainState reference = final_state(tiny_run());
  REQUIRE(reference.step == 4);
  REQUIRE(reference.probes.size() == 5);
  for (const RunOption& o : study::run_options()) {
    if (o.fingerprint) continue;
    OptionValues changed = tiny_run();
    changed.set(o.name, other_value(o, changed.get(o.name)), "test");
    INFO("--" << o.name << " = " << changed.get(o.name));
    const sim::TrainState s = final_state(changed);
    CHECK(s.params == reference.params);
    CHECK(s.adam_m == reference.adam_m);
    CHECK(s.adam_v == reference.adam_v);
    REQUIRE(s.probes.size() == reference.probes.size());
    for (std::size_t p = 0; p < s.probes.size(); ++p) {
      CHECK(s.probes[p].loss == reference.probes[p].loss);
      for (std::size_t l = 0; l < s.probes[p].layers.size(); ++l) {
        CHECK(s.probes[p].layers[l].sink.sink_rate == reference.probes[p].layers[l].sink.sink_rate);
        CHECK(s.probes[p].layers[l].state.p0_norm_ratio == reference.probes[p].layers[l].state.p0_norm_ratio);
        for (std::size_t h = 0; h < s.probes[p].layers[l].heads.size(); ++h)
          CHECK(s.probes[p].layers[l].heads[h].attn_to_0 == reference.probes[p].layers[l].heads[h].attn_to_0);
      }
    }
  }
}

TEST_CASE("a checkpoint is refused under another fingerprint and read back under its own", "[study][checkpoint]") {
  const OptionValues run = tiny_run();
  const sim::TrainState state = final_state(run);
  const std::string bytes = sim::encode_checkpoint(run.checkpoint_fingerprint(), state);
  const sim::TrainState back = sim::decode_checkpoint(bytes, run.checkpoint_fingerprint(), 4, "ckpt");
  CHECK(back.params == state.params);
  CHECK(back.step == 4);

  OptionValues other_seed = run;
  other_seed.set("seed", "9", "test");
  CHECK_THROWS_AS(sim::decode_checkpoint(bytes, other_seed.checkpoint_fingerprint(), 4, "ckpt"), UsageError);
  OptionValues other_threshold = run;
  other_threshold.set("emerge-attn", "0.7", "test");
  CHECK_NOTHROW(sim::decode_checkpoint(bytes, other_threshold.checkpoint_fingerprint(), 4, "ckpt"));
  // Fewer total steps than the checkpoint holds: not this run's checkpoint either.
  CHECK_THROWS_AS(sim::decode_checkpoint(bytes, run.checkpoint_fingerprint(), 3, "ckpt"), UsageError);
}

TEST_CASE("a checkpoint fits a run of other --steps under a constant schedule only, and nothing else changed",
          "[study][checkpoint]") {
  const std::string schedule = GENERATE(as<std::string>{}, "constant", "cosine");
  OptionValues run = tiny_run();
  run.set("schedule", schedule, "test");
  const std::string bytes = sim::encode_checkpoint(run.checkpoint_fingerprint(), final_state(run));
  OptionValues longer = run;
  longer.set("steps", "40", "test");
  INFO("--schedule " << schedule);
  CHECK(longer.checkpoint_fingerprint() != run.checkpoint_fingerprint());  // the text still records the steps
  if (schedule == "constant") {
    CHECK(sim::decode_checkpoint(bytes, longer.checkpoint_fits(), 40, "ckpt").step == 4);
  } else {
    CHECK_THROWS_AS(sim::decode_checkpoint(bytes, longer.checkpoint_fits(), 40, "ckpt"), UsageError);
  }
  longer.set("lr", "0.5", "test");
  CHECK_THROWS_AS(sim::decode_checkpoint(bytes, longer.checkpoint_fits(), 40, "ckpt"), UsageError);
  CHECK_THROWS_AS(sim::decode_checkpoint(bytes, run.checkpoint_fits(), 3, "ckpt"), UsageError);
}

TEST_CASE("a checkpoint of another engine version is refused with one line naming both versions",
          "[study][checkpoint]") {
  const OptionValues run = tiny_run();
  std::string bytes = sim::encode_checkpoint(run.checkpoint_fingerprint(), final_state(run));
  const std::uint32_t other = kEngineVersion + 1;
  std::memcpy(bytes.data() + 12, &other, 4);  // after the magic and the format version
  try {
    sim::decode_checkpoint(bytes, run.checkpoint_fingerprint(), 4, "ckpt");
    FAIL("accepted a checkpoint of engine version " << other);
  } catch (const UsageError& e) {
    const std::string what = e.what();
    CHECK(what.find("engine version " + std::to_string(other)) != std::string::npos);
    CHECK(what.find("engine version " + std::to_string(kEngineVersion)) != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

}  // namespace study_checkpoint_fingerprint_test
