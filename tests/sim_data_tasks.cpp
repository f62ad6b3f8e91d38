// Synthetic tasks (DESIGN.md section 4): position 0 must carry no position information, so its
// token has the same marginal as every other position; the data stream is counter-based.
#include <boost/math/distributions/chi_squared.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "common/errors.hpp"
#include "common/stats.hpp"
#include "sim/data.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_data_tasks_test {

using p0sim::sim::DataConfig;
using p0sim::sim::DataGenerator;
using p0sim::sim::Task;

namespace {

// Pearson chi-squared goodness of fit of `counts` to probabilities `p`. Categories whose expected
// count is below 5 are pooled (the usual validity rule for the chi-squared approximation).
// Returns statistic / critical value at significance `level`: <= 1 means "not rejected".
double chi2_ratio(const std::vector<long>& counts, const std::vector<double>& p, double level) {
  long n = 0;
  for (long c : counts) n += c;
  double stat = 0.0, pooled_obs = 0.0, pooled_exp = 0.0;
  int bins = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double e = p[i] * static_cast<double>(n);
    if (e < 5.0) {
      pooled_obs += static_cast<double>(counts[i]);
      pooled_exp += e;
      continue;
    }
    stat += (static_cast<double>(counts[i]) - e) * (static_cast<double>(counts[i]) - e) / e;
    ++bins;
  }
  if (pooled_exp > 0.0) {
    stat += (pooled_obs - pooled_exp) * (pooled_obs - pooled_exp) / std::max(pooled_exp, 1e-300);
    ++bins;
  }
  REQUIRE(bins >= 2);
  boost::math::chi_squared_distribution<double, p0sim::MathPolicy> dist(bins - 1);
  return stat / boost::math::quantile(boost::math::complement(dist, level));
}

std::vector<long> position_counts(const std::vector<std::int32_t>& rows, int row_len, int pos, int V) {
  std::vector<long> c(static_cast<std::size_t>(V), 0);
  for (std::size_t r = 0; r * row_len < rows.size(); ++r) ++c[static_cast<std::size_t>(rows[r * row_len + pos])];
  return c;
}

std::vector<std::int32_t> draw(const DataGenerator& gen, int n_rows) {
  std::vector<std::int32_t> rows(static_cast<std::size_t>(n_rows) * gen.row_length());
  gen.fill(0, 0, n_rows, rows.data());
  return rows;
}

// Fixed seeds make each test deterministic; the level says how often a correct generator would
// fail it across seeds.
constexpr double kLevel = 1e-3;
constexpr int kRows = 40000;

// n_rows rows of batch 0 of stream 0 and what the task scores at each input position.
struct Drawn {
  std::vector<std::int32_t> rows;       // (n_rows, T+1)
  std::vector<p0sim::sim::Kind> kinds;  // (n_rows, T)
};
Drawn draw_with_kinds(const DataGenerator& gen, int n_rows) {
  Drawn d{std::vector<std::int32_t>(static_cast<std::size_t>(n_rows) * gen.row_length()),
          std::vector<p0sim::sim::Kind>(static_cast<std::size_t>(n_rows) * gen.config().seq_len)};
  gen.fill(0, 0, n_rows, d.rows.data(), d.kinds.data());
  return d;
}

// firstrecall's row law at V=12 (fillers 0..8, triggers 9..11), T=24, q=0.15.
DataConfig inserted_triggers(Task task) {
  DataConfig cfg;
  cfg.task = task;
  cfg.vocab = 12;
  cfg.seq_len = 24;
  cfg.triggers = 3;
  cfg.trigger_prob = 0.15;
  return cfg;
}

}  // namespace

TEST_CASE("the token at position 0 has the same marginal as every other position", "[data]") {
  auto [task, vocab, alpha] = GENERATE(table<Task, int, double>({
      {Task::uniform, 10, 0.1},
      {Task::repeat, 10, 0.1},
      {Task::markov, 8, 0.3},
      {Task::backcopy, 8, 0.3},
      {Task::backcopy, 12, 1.0},
  }));
  CAPTURE(p0sim::enum_name(task), vocab, alpha);
  DataConfig cfg;
  cfg.task = task;
  cfg.vocab = vocab;
  cfg.seq_len = 24;
  cfg.markov_alpha = alpha;
  cfg.triggers = 2;
  cfg.seed = 7;
  DataGenerator gen(cfg);
  const auto marginal = gen.marginal();
  double total = 0.0;
  for (double p : marginal) total += p;
  REQUIRE_THAT(total, Catch::Matchers::WithinAbs(1.0, 1e-12));

  const auto rows = draw(gen, kRows);
  for (int pos : {0, 1, cfg.seq_len / 2, cfg.seq_len}) {
    CAPTURE(pos);
    CHECK(chi2_ratio(position_counts(rows, gen.row_length(), pos, vocab), marginal, kLevel) <= 1.0);
  }
  if (task == Task::markov || task == Task::backcopy) {
    // The chain's marginal is far from uniform, so drawing position 0 uniformly (the easy
    // mistake) would fail the check above: confirm this sample size sees the difference.
    std::vector<double> flat(static_cast<std::size_t>(vocab), 1.0 / vocab);
    CHECK(chi2_ratio(position_counts(rows, gen.row_length(), 0, vocab), flat, kLevel) > 1.0);
  }
}

TEST_CASE("repeat rows hold one token", "[data]") {
  DataConfig cfg;
  cfg.task = Task::repeat;
  cfg.vocab = 5;
  cfg.seq_len = 9;
  DataGenerator gen(cfg);
  const auto rows = draw(gen, 200);
  for (std::size_t r = 0; r < 200; ++r)
    for (int t = 1; t < gen.row_length(); ++t) REQUIRE(rows[r * gen.row_length() + t] == rows[r * gen.row_length()]);
}

TEST_CASE("backcopy copies the token before a trigger and otherwise follows the chain", "[data]") {
  DataConfig cfg;
  cfg.task = Task::backcopy;
  cfg.vocab = 16;
  cfg.seq_len = 32;
  cfg.triggers = 3;
  cfg.markov_alpha = 0.5;
  DataGenerator gen(cfg);
  const auto trig = gen.trigger_tokens();
  REQUIRE(trig.size() == 3);
  std::vector<char> is_trig(16, 0);
  for (int g : trig) is_trig[static_cast<std::size_t>(g)] = 1;
  const auto rows = draw(gen, 2000);
  const int N = gen.row_length();
  long copies = 0, other_after_trigger = 0, consecutive_triggers = 0;
  for (std::size_t r = 0; r < 2000; ++r) {
    const std::int32_t* x = &rows[r * N];
    for (int t = 2; t < N; ++t) {
      if (is_trig[static_cast<std::size_t>(x[t - 1])]) (x[t] == x[t - 2] ? copies : other_after_trigger)++;
      if (is_trig[static_cast<std::size_t>(x[t - 1])] && is_trig[static_cast<std::size_t>(x[t])])
        ++consecutive_triggers;
    }
  }
  CHECK(copies > 1000);  // the rule is exercised, not vacuous
  CHECK(other_after_trigger == 0);
  // A trigger is always preceded by a non-trigger, so two triggers in a row (which would lock
  // the sequence into alternating forever) never happen.
  CHECK(consecutive_triggers == 0);
}

TEST_CASE("a batch is the same whatever was drawn before", "[data]") {
  for (Task task : {Task::uniform, Task::markov, Task::backcopy, Task::repeat}) {
    CAPTURE(p0sim::enum_name(task));
    DataConfig cfg;
    cfg.task = task;
    cfg.vocab = 11;
    cfg.seq_len = 6;
    DataGenerator gen(cfg), twin(cfg);
    const int N = gen.row_length();
    std::vector<std::int32_t> big(16 * N), small(4 * N), again(4 * N), other(4 * N);
    gen.fill(0, 0, 16, big.data());
    twin.fill(0, 3, 4, small.data());  // rows 12..15 of stream 0, drawn by a fresh generator
    REQUIRE(std::equal(small.begin(), small.end(), big.begin() + 12 * N));
    gen.fill(1, 9, 4, other.data());
    gen.fill(0, 3, 4, again.data());
    REQUIRE(again == small);
    if (task != Task::repeat) CHECK(other != small);  // streams are independent
  }
}

TEST_CASE("the task structure is a function of the seed", "[data]") {
  DataConfig cfg;
  cfg.task = Task::markov;
  cfg.vocab = 6;
  DataGenerator a(cfg), b(cfg);
  CHECK(a.marginal() == b.marginal());
  cfg.seed = 2;
  DataGenerator c(cfg);
  CHECK(a.marginal() != c.marginal());
}

TEST_CASE("the markov entropy floor is the mean Bayes-optimal loss", "[data]") {
  DataConfig cfg;
  cfg.task = Task::markov;
  cfg.vocab = 7;
  cfg.seq_len = 8;
  cfg.markov_alpha = 0.7;
  DataGenerator gen(cfg);
  const double floor = gen.entropy_floor();
  REQUIRE(floor > 0.0);
  REQUIRE(floor < std::log(7.0));
  // Estimate E[-log P(x_{t+1} | x_t)] with the empirical transition frequencies of a large
  // sample (plug-in entropy of the empirical conditionals); 20000 rows x 8 transitions puts its
  // bias (~ (V-1)V / (2n)) and spread well under 0.01 nats.
  const auto rows = draw(gen, 20000);
  std::vector<double> pair(49, 0.0), from(7, 0.0);
  const int N = gen.row_length();
  for (std::size_t r = 0; r < 20000; ++r)
    for (int t = 0; t + 1 < N; ++t) {
      pair[static_cast<std::size_t>(rows[r * N + t] * 7 + rows[r * N + t + 1])] += 1;
      from[static_cast<std::size_t>(rows[r * N + t])] += 1;
    }
  double h = 0.0, n = 0.0;
  for (int a = 0; a < 7; ++a)
    for (int c = 0; c < 7; ++c) {
      const double k = pair[static_cast<std::size_t>(a * 7 + c)];
      if (k > 0) h -= k * std::log(k / from[static_cast<std::size_t>(a)]);
      n += k;
    }
  CHECK_THAT(h / n, Catch::Matchers::WithinAbs(floor, 0.01));

  cfg.task = Task::uniform;
  CHECK_THAT(DataGenerator(cfg).entropy_floor(), Catch::Matchers::WithinRel(std::log(7.0), 1e-15));
  cfg.task = Task::repeat;
  CHECK(DataGenerator(cfg).entropy_floor() == 0.0);
  CHECK_THAT(DataGenerator(cfg).entropy_floor(true), Catch::Matchers::WithinRel(std::log(7.0) / 9.0, 1e-12));
}

TEST_CASE("bad data configs are rejected naming the configuration field", "[data]") {
  DataConfig cfg;
  cfg.vocab = 1;
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("vocab: "));
  cfg = {};
  cfg.seq_len = 1;
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("seq_len: "));
  cfg = {};
  cfg.task = Task::backcopy;
  cfg.vocab = 4;
  cfg.triggers = 4;
  REQUIRE_THROWS_AS(DataGenerator(cfg), p0sim::UsageError);
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("triggers: "));
  cfg.triggers = 0;
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("triggers: "));
  cfg = {};
  cfg.markov_alpha = 0.0;
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("markov_alpha: "));
  cfg.markov_alpha = std::nan("");
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("markov_alpha: "));
}

TEST_CASE("the existing tasks draw the same tokens as before firstrecall and lookup were added", "[data]") {
  // FNV-1a of batch 5 of stream 2 (50 rows, V=20, T=12, alpha 0.3, k=3, seed 11), recorded with the
  // generator as it was before the new tasks; runs and their seeds stay reproducible across versions.
  auto [task, expected] = GENERATE(table<Task, std::uint64_t>({
      {Task::uniform, 0xd3e1bd44bc165661ull},
      {Task::markov, 0x8cbf0b0417cf9a88ull},
      {Task::backcopy, 0xaa459c52fe840177ull},
      {Task::repeat, 0xa6397a2fbcecc340ull},
  }));
  CAPTURE(p0sim::enum_name(task));
  DataConfig c;
  c.task = task;
  c.vocab = 20;
  c.seq_len = 12;
  c.markov_alpha = 0.3;
  c.triggers = 3;
  c.seed = 11;
  DataGenerator g(c);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(50 * g.row_length())), again(rows.size());
  std::vector<p0sim::sim::Kind> kinds(static_cast<std::size_t>(50 * c.seq_len));
  g.fill(2, 5, 50, rows.data());
  std::uint64_t h = 1469598103934665603ull;
  for (auto x : rows) {
    h ^= static_cast<std::uint32_t>(x);
    h *= 1099511628211ull;
  }
  CHECK(h == expected);
  g.fill(2, 5, 50, again.data(), kinds.data());  // asking for kinds draws the same rows
  CHECK(again == rows);
}

TEST_CASE("firstrecall's position 0 has the same marginal as every other position", "[data]") {
  auto [filler, q] = GENERATE(table<p0sim::sim::Filler, double>({
      {p0sim::sim::Filler::uniform, 0.2},
      {p0sim::sim::Filler::markov, 0.3},
  }));
  CAPTURE(p0sim::enum_name(filler), q);
  DataConfig cfg;
  cfg.task = Task::firstrecall;
  cfg.vocab = 10;
  cfg.seq_len = 20;
  cfg.triggers = 2;
  cfg.trigger_prob = q;
  cfg.filler = filler;
  cfg.markov_alpha = 0.3;
  cfg.seed = 5;
  DataGenerator gen(cfg);
  const auto marginal = gen.marginal();
  double total = 0.0, trig = 0.0;
  for (double p : marginal) total += p;
  for (int g : gen.trigger_tokens()) trig += marginal[static_cast<std::size_t>(g)];
  REQUIRE_THAT(total, Catch::Matchers::WithinAbs(1.0, 1e-12));
  REQUIRE_THAT(trig, Catch::Matchers::WithinAbs(q, 1e-12));
  const auto rows = draw(gen, kRows);
  for (int pos : {0, 1, 2, cfg.seq_len / 2, cfg.seq_len}) {
    CAPTURE(pos);
    CHECK(chi2_ratio(position_counts(rows, gen.row_length(), pos, cfg.vocab), marginal, kLevel) <= 1.0);
  }
  // Drawing position 0 from the fillers only (the easy mistake) is visible at this sample size.
  std::vector<double> fillers_only(marginal);
  for (int g : gen.trigger_tokens()) fillers_only[static_cast<std::size_t>(g)] = 0.0;
  for (double& p : fillers_only) p /= 1.0 - q;
  CHECK(chi2_ratio(position_counts(rows, gen.row_length(), 0, cfg.vocab), fillers_only, kLevel) > 1.0);
}

TEST_CASE("firstrecall copies position 0 after each inserted trigger and marks triggers as active", "[data]") {
  using p0sim::sim::Kind;
  const DataConfig cfg = inserted_triggers(Task::firstrecall);
  DataGenerator gen(cfg);
  const auto trig = gen.trigger_tokens();
  REQUIRE(trig == std::vector<int>{9, 10, 11});  // the layout: fillers 0..V-k-1, triggers after
  const int n_rows = 3000, N = gen.row_length(), T = cfg.seq_len;
  const auto [rows, kinds] = draw_with_kinds(gen, n_rows);
  long active = 0, first = 0, wrong_copy = 0, wrong_first = 0, unmarked = 0, x0_trigger_repeats = 0;
  for (int r = 0; r < n_rows; ++r) {
    const std::int32_t* x = &rows[static_cast<std::size_t>(r * N)];
    const Kind* k = &kinds[static_cast<std::size_t>(r * T)];
    const bool x0_trigger = x[0] >= 9;
    if (x0_trigger && x[1] == x[0] && k[0] == Kind::none) ++x0_trigger_repeats;
    int firsts = 0;
    bool seen_active = false;
    for (int t = 0; t < T; ++t) {
      if (k[t] == Kind::none) {
        // An unmarked trigger at t >= 1 can only be a copy of a trigger at position 0, right after
        // an inserted (marked) trigger; a trigger at position 0 itself does not fire.
        if (t >= 1 && x[t] >= 9 && !(x0_trigger && x[t] == x[0] && k[t - 1] != Kind::none)) ++unmarked;
        continue;
      }
      ++active;
      if (t == 0 || x[t] < 9 || x[t + 1] != x[0]) ++wrong_copy;
      if (k[t] == Kind::first) {
        ++first;
        ++firsts;
        if (seen_active) ++wrong_first;
      }
      seen_active = true;
    }
    if (firsts > 1) ++wrong_first;
  }
  CHECK(active > 5000);  // about n_rows * T * q / (1 + q)
  CHECK(first > 2000);
  CHECK(wrong_copy == 0);
  CHECK(wrong_first == 0);
  CHECK(unmarked == 0);
  // x_1 after a trigger at position 0 is fresh: it repeats x_0 only by chance (about q/k = 5%).
  CHECK(x0_trigger_repeats < 0.1 * n_rows * 0.15);
}

TEST_CASE("lookup answers a query with the latest value of its key, or none", "[data]") {
  using p0sim::sim::Kind;
  DataConfig cfg;
  cfg.task = Task::lookup;
  cfg.keys = 3;
  cfg.values = 4;
  cfg.vocab = 4 * (1 + 3) + 3 + 2 + 3;  // 3 fillers
  cfg.seq_len = 30;
  cfg.trigger_prob = 0.15;
  DataGenerator gen(cfg);
  REQUIRE(gen.lookup_fact(2, 3) == 4 + 2 * 4 + 3);
  REQUIRE(gen.lookup_query(0) == 16);
  REQUIRE(gen.lookup_none() == 19);
  const int n_rows = 2000, N = gen.row_length(), T = cfg.seq_len;
  const auto [rows, kinds] = draw_with_kinds(gen, n_rows);
  long answered = 0, nones = 0, wrong = 0, mismarked = 0;
  for (int r = 0; r < n_rows; ++r) {
    const std::int32_t* x = &rows[static_cast<std::size_t>(r * N)];
    int memory[3] = {-1, -1, -1};
    bool after_query = false;
    for (int t = 0; t < N; ++t) {
      const bool is_query = !after_query && x[t] >= 16 && x[t] <= 18;
      if (t < T && ((kinds[static_cast<std::size_t>(r * T + t)] == Kind::active) != is_query)) ++mismarked;
      if (is_query && t + 1 < N) {
        const int key = x[t] - 16, want = memory[key] >= 0 ? memory[key] : 19;
        if (x[t + 1] != want) ++wrong;
        ++answered;
        nones += want == 19;
      }
      if (!after_query && x[t] >= 4 && x[t] < 16) memory[(x[t] - 4) / 4] = (x[t] - 4) % 4;
      after_query = is_query;
    }
  }
  CHECK(answered > 5000);
  CHECK(nones > 500);  // both kinds of answer occur
  CHECK(answered - nones > 2000);
  CHECK(wrong == 0);
  CHECK(mismarked == 0);
}

TEST_CASE("backcopy-indep copies the token before each inserted trigger and marks every trigger active", "[data]") {
  using p0sim::sim::Kind;
  const DataConfig cfg = inserted_triggers(Task::backcopy_indep);
  DataGenerator gen(cfg);
  REQUIRE(gen.trigger_tokens() == std::vector<int>{9, 10, 11});
  const int n_rows = 3000, N = gen.row_length(), T = cfg.seq_len;
  const auto [rows, kinds] = draw_with_kinds(gen, n_rows);
  long active = 0, wrong_copy = 0, not_active = 0, copies_of_x0 = 0, unmarked = 0;
  for (int r = 0; r < n_rows; ++r) {
    const std::int32_t* x = &rows[static_cast<std::size_t>(r * N)];
    const Kind* k = &kinds[static_cast<std::size_t>(r * T)];
    for (int t = 0; t < T; ++t) {
      if (k[t] == Kind::none) {
        // An unmarked trigger at t >= 1 can only be a copy (of a trigger at position 0, or of such
        // a copy).
        if (t >= 1 && x[t] >= 9 && !(t >= 2 && x[t] == x[t - 2] && k[t - 1] != Kind::none)) ++unmarked;
        continue;
      }
      ++active;
      not_active += k[t] != Kind::active;
      if (t == 0 || x[t] < 9 || x[t + 1] != x[t - 1]) ++wrong_copy;
      copies_of_x0 += t >= 2 && x[t + 1] == x[0];
    }
  }
  CHECK(active > 5000);  // about n_rows * T * q / (1 + q)
  CHECK(wrong_copy == 0);
  CHECK(not_active == 0);  // no "first" trigger: position 0 is not the copy source
  CHECK(unmarked == 0);
  // Copying x_0 instead (firstrecall's rule) would make every copy equal x_0; with 9 fillers, a
  // copy of x_{t-1} equals x_0 about 1/9 of the time.
  CHECK(copies_of_x0 < 0.2 * active);
}

TEST_CASE("firstrecall-lookup answers queries like lookup and copies position 0 after each inserted trigger",
          "[data]") {
  using p0sim::sim::Kind;
  DataConfig cfg;
  cfg.task = Task::firstrecall_lookup;
  cfg.keys = 3;
  cfg.values = 4;
  cfg.triggers = 2;
  cfg.vocab = 26;  // values 0..3, facts 4..15, queries 16..18, none 19, fillers 20..23, triggers 24 and 25
  cfg.seq_len = 30;
  cfg.trigger_prob = 0.12;
  DataGenerator gen(cfg);
  REQUIRE(gen.lookup_none() == 19);
  REQUIRE(gen.trigger_tokens() == std::vector<int>{24, 25});
  const int n_rows = 2000, N = gen.row_length(), T = cfg.seq_len;
  const auto [rows, kinds] = draw_with_kinds(gen, n_rows);
  long answered = 0, wrong_answer = 0, copies = 0, wrong_copy = 0, firsts = 0, mismarked = 0;
  for (int r = 0; r < n_rows; ++r) {
    const std::int32_t* x = &rows[static_cast<std::size_t>(r * N)];
    const Kind* k = &kinds[static_cast<std::size_t>(r * T)];
    int memory[3] = {-1, -1, -1};
    bool answer_next = false, copy_next = false, seen_trigger = false;
    for (int t = 0; t < N; ++t) {
      const bool fresh = !answer_next && !copy_next;
      const bool is_query = fresh && x[t] >= 16 && x[t] <= 18;
      const bool is_trigger = fresh && t >= 1 && x[t] >= 24;
      if (t < T) {
        const Kind want = is_query     ? Kind::query
                          : is_trigger ? (seen_trigger ? Kind::active : Kind::first)
                                       : Kind::none;
        mismarked += k[t] != want;
        firsts += k[t] == Kind::first;
      }
      if (answer_next) {
        ++answered;
        const int key = x[t - 1] - 16;
        wrong_answer += x[t] != (memory[key] >= 0 ? memory[key] : 19);
      }
      if (copy_next) {
        ++copies;
        wrong_copy += x[t] != x[0];
      }
      if (fresh && x[t] >= 4 && x[t] < 16) memory[(x[t] - 4) / 4] = (x[t] - 4) % 4;
      seen_trigger = seen_trigger || is_trigger;
      answer_next = is_query;
      copy_next = is_trigger;
    }
  }
  CHECK(answered > 4000);
  CHECK(copies > 4000);
  CHECK(firsts > 1500);
  CHECK(wrong_answer == 0);
  CHECK(wrong_copy == 0);
  CHECK(mismarked == 0);
}

TEST_CASE("bad firstrecall and lookup configs are rejected naming the configuration field", "[data]") {
  DataConfig cfg;
  cfg.task = Task::firstrecall;
  cfg.trigger_prob = 1.0;
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("trigger_prob: "));
  cfg.trigger_prob = 0.1;
  cfg.triggers = cfg.vocab;
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("triggers: "));
  cfg = {};
  cfg.task = Task::lookup;
  cfg.vocab = 20;  // 4 keys x 8 values need 8*5+4+2 = 46
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("vocab: "));
  cfg.vocab = 64;
  cfg.trigger_prob = 0.6;
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("trigger_prob: "));
  cfg.trigger_prob = 0.1;
  cfg.keys = 0;
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("keys: "));
  cfg = {};
  cfg.task = Task::firstrecall_lookup;
  cfg.vocab = 49;  // 46 for lookup + 4 triggers = 50
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("vocab: "));
  cfg.vocab = 64;
  cfg.trigger_prob = 0.34;  // facts, queries and triggers share one draw: at most 1/3
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("trigger_prob: "));
  cfg = {};
  cfg.task = Task::backcopy_indep;
  cfg.trigger_prob = 1.0;
  REQUIRE_THROWS_WITH(DataGenerator(cfg), Catch::Contains("trigger_prob: "));
}

}  // namespace sim_data_tasks_test
