#pragma once
// Chance levels of the tasks that recall position 0 (firstrecall, firstrecall-lookup) for a model
// that sees content but not order: the Bayes-optimal accuracy of an observer that knows, at a
// firing trigger at position t, only x_t and the multiset of tokens x_0..x_t. It bounds what the
// prefix-bidirectional control can reach (NoPE, no BOS, every prefix attended to bidirectionally:
// its prediction at t is a function of x_t and that multiset), so the control is judged against
// it, not against a guess.
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/data.hpp"
#include "study/experiment_config.hpp"

namespace p0sim::study {

// P(x_0 = a | x_t = trigger and the multiset of x_0..x_t, x_t an inserted (firing) trigger), for
// every token a, under firstrecall's row law with uniform fillers (sim/data.cpp). `counts[a]` is how
// often token a occurs among x_0..x_t (their sum is t + 1). Exact: under the hypothesis x_0 = a the
// multiset fixes how many triggers fired (every trigger at t >= 1 fires; a trigger x_0 is copied by
// each), so the posterior is a ratio of multinomial terms summed over the coin patterns that fit.
// With `first`, also given that x_t is the row's first firing trigger. Throws
// std::invalid_argument when the counts fit no row (e.g. x_t not a trigger among them).
std::vector<double> firstrecall_content_posterior(const std::vector<long>& counts, int t, int trigger,
                                                  const sim::DataConfig& c, bool first = false);

// The same under firstrecall-lookup's row law (`gen` is that task's generator): lookup's facts,
// queries and answers make the count of orders that fit a multiset depend on which facts precede
// which queries, so the weight of each x_0 counts those orders exactly (study/chance.cpp).
std::vector<double> firstrecall_lookup_content_posterior(const std::vector<long>& counts, int trigger,
                                                         const sim::DataGenerator& gen, bool first = false);

struct ContentOnlyChance {
  // at the first firing trigger of each row (Kind::first), by an observer also told it is the first
  double first_trigger_accuracy = 0.0;
  double trigger_accuracy = 0.0;        // at every scored trigger (Kind::first and Kind::active)
  long first_queries = 0, queries = 0;  // how many queries each average counts
  long rows = 0;
};

// The Bayes-optimal content-only accuracy, averaged over `rows` rows drawn from the task's data
// stream `stream` (a stream no training or probe uses), ties split evenly. Computed for the tasks
// above (firstrecall with uniform fillers, firstrecall-lookup up to kLookupChanceMaxT); others throw
// std::invalid_argument.
// Counting firstrecall-lookup's orders of facts and queries grows fast with T (measured: 27 us per
// trigger at T = 32, 100 000 rows in 7 s; 80 ms per row at T = 64; hours at T = 128), so its chance
// level is computed up to kLookupChanceMaxT.
inline constexpr std::uint64_t kChanceStream = 7;
inline constexpr int kLookupChanceMaxT = 32;
bool has_content_posterior(const sim::DataConfig& c);
ContentOnlyChance content_only_chance(const sim::DataConfig& c, long rows);

// The experiment's control's chance level, when the bound applies to it: a prefix-bidirectional
// control with no positions and no BOS, on a task above (nullopt otherwise).
// kChanceRows rows: the accuracies' sampling standard errors are below 0.002.
inline constexpr long kChanceRows = 100000;
std::optional<ContentOnlyChance> control_chance(const ExperimentConfig& c);

}  // namespace p0sim::study
