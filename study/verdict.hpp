#pragma once
// The verdict on the three claims: a pure function of the runs' final metrics (results in,
// verdict out), so a unit test can call it on fixed numbers. The rules are in verdict.cpp.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/chance.hpp"
#include "study/experiment_config.hpp"
#include "study/results.hpp"

namespace p0sim::study {

struct RunRecord {
  std::string variant;
  int seed_index = 0;
  std::uint64_t seed = 0;  // derive_seed(base seed, variant, seed_index)
  RunMetrics metrics;
};

// The largest layer count among the runs (the per-layer columns a table needs).
std::size_t max_layers(const std::vector<RunRecord>& runs);

// The verdict (see verdict.cpp for the exact rules) and the per-variant summary table. With the
// control's content-only chance level (study/chance.hpp), "control_chance" sets main's and the
// control's accuracies next to it.
nlohmann::json make_verdict(const ExperimentConfig& c, const std::vector<std::string>& variants, int seeds,
                            const std::vector<RunRecord>& runs,
                            const std::optional<ContentOnlyChance>& chance = std::nullopt);
std::string verdict_table(const nlohmann::json& verdict);

}  // namespace p0sim::study
