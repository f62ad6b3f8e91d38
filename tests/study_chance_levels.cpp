// The content-only chance levels of firstrecall and firstrecall-lookup (the Bayes-optimal accuracy
// of an observer that sees x_t and the multiset of the prefix, not its order) against brute-force
// enumeration of each row law,
// and the bounded statistics the verdict reports (bootstrap percentiles, Clopper-Pearson).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "common/stats.hpp"
#include "sim/data.hpp"
#include "study/chance.hpp"
#include "study/stats.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace study_chance_levels_test {

using namespace p0sim::study;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

p0sim::sim::DataConfig firstrecall(int vocab, int triggers, double q, int seq_len) {
  p0sim::sim::DataConfig c;
  c.task = p0sim::sim::Task::firstrecall;
  c.vocab = vocab;
  c.triggers = triggers;
  c.trigger_prob = q;
  c.seq_len = seq_len;
  return c;
}

// Every row prefix x_0..x_len-1 with its probability under firstrecall's law (independently of
// sim/data.cpp: x_0 a trigger w.p. q else a uniform filler; later, the position after a firing
// trigger copies x_0, any other fires w.p. q or draws a uniform filler). `visit(x, fired, p)`
// gets the tokens and which positions fired.
void enumerate_rows(const p0sim::sim::DataConfig& c, int len,
                    const std::function<void(const std::vector<int>&, const std::vector<bool>&, double)>& visit) {
  const int n = c.vocab - c.triggers;
  const double q = c.trigger_prob;
  std::vector<int> x(static_cast<std::size_t>(len));
  std::vector<bool> fired(static_cast<std::size_t>(len), false);
  std::function<void(int, double)> go = [&](int s, double p) {
    if (s == len) return visit(x, fired, p);
    const auto i = static_cast<std::size_t>(s);
    if (s >= 1 && fired[i - 1]) {
      x[i] = x[0];
      fired[i] = false;
      return go(s + 1, p);
    }
    for (int a = 0; a < c.vocab; ++a) {
      const bool trigger = a >= n;
      x[i] = a;
      fired[i] = trigger && s >= 1;
      go(s + 1, p * (trigger ? q / c.triggers : (1.0 - q) / n));
    }
  };
  go(0, 1.0);
}

p0sim::sim::DataConfig frlookup(int keys, int values, int triggers, int fillers, double q, int seq_len) {
  p0sim::sim::DataConfig c;
  c.task = p0sim::sim::Task::firstrecall_lookup;
  c.keys = keys;
  c.values = values;
  c.triggers = triggers;
  c.vocab = values * (1 + keys) + keys + 1 + fillers + triggers;
  c.trigger_prob = q;
  c.seq_len = seq_len;
  return c;
}

// The same for firstrecall-lookup, from its documented layout and law (sim/data.hpp, data.cpp):
// values 0..Nv-1, facts Nv + k*Nv + v, queries Nv + K*Nv + k, none, fillers, triggers last. A fresh
// position draws a fact (q, key and value uniform), a query (q), a trigger (q) or a uniform filler;
// a query is followed by the key's latest value (none before any), a trigger at s >= 1 by x_0.
void enumerate_lookup_rows(
    const p0sim::sim::DataConfig& c, int len,
    const std::function<void(const std::vector<int>&, const std::vector<bool>&, double)>& visit) {
  const int K = c.keys, Nv = c.values, G = c.triggers, V = c.vocab;
  const int none = Nv + K * Nv + K, fillers = V - G - none - 1;
  const double q = c.trigger_prob;
  std::vector<int> x(static_cast<std::size_t>(len)), mem(static_cast<std::size_t>(K), -1);
  std::vector<bool> fired(static_cast<std::size_t>(len), false);
  std::function<void(int, double, int)> go = [&](int s, double p, int asked) {
    if (s == len) return visit(x, fired, p);
    const auto i = static_cast<std::size_t>(s);
    fired[i] = false;
    if (asked >= 0) {
      const int m = mem[static_cast<std::size_t>(asked)];
      x[i] = m >= 0 ? m : none;
      return go(s + 1, p, -1);
    }
    if (s >= 1 && fired[i - 1]) {
      x[i] = x[0];
      return go(s + 1, p, -1);
    }
    for (int k = 0; k < K; ++k)
      for (int v = 0; v < Nv; ++v) {
        const int before = mem[static_cast<std::size_t>(k)];
        mem[static_cast<std::size_t>(k)] = v;
        x[i] = Nv + k * Nv + v;
        go(s + 1, p * q / (K * Nv), -1);
        mem[static_cast<std::size_t>(k)] = before;
      }
    for (int k = 0; k < K; ++k) {
      x[i] = Nv + K * Nv + k;
      go(s + 1, p * q / K, k);
    }
    for (int g = 0; g < G; ++g) {
      x[i] = V - G + g;
      fired[i] = s >= 1;
      go(s + 1, p * q / G, -1);
      fired[i] = false;
    }
    for (int f = 0; f < fillers; ++f) {
      x[i] = none + 1 + f;
      go(s + 1, p * (1.0 - 3.0 * q) / fillers, -1);
    }
  };
  go(0, 1.0, -1);
}

// The Bayes accuracy of guessing x_0 by `posterior(counts, t, x_t, first)` at every firing trigger
// of every enumerated row: {at every trigger (first = false), at the first (told it is: first =
// true)}, ties split evenly.
template <typename Enumerate, typename Posterior>
std::pair<double, double> enumerated_accuracy(const p0sim::sim::DataConfig& c, Enumerate enumerate,
                                              Posterior posterior) {
  double hits = 0.0, queries = 0.0, first_hits = 0.0, first_queries = 0.0;
  enumerate(c, c.seq_len, [&](const std::vector<int>& x, const std::vector<bool>& fired, double p) {
    std::vector<long> counts(static_cast<std::size_t>(c.vocab), 0);
    bool first = true;
    const auto hit_of = [&](int t, bool told_first) {
      const std::vector<double> post = posterior(counts, t, x[static_cast<std::size_t>(t)], told_first);
      const double best = *std::max_element(post.begin(), post.end());
      int ties = 0;
      for (double v : post) ties += v >= best * (1.0 - 1e-12);
      return post[static_cast<std::size_t>(x[0])] >= best * (1.0 - 1e-12) ? 1.0 / ties : 0.0;
    };
    for (int t = 0; t < c.seq_len; ++t) {
      ++counts[static_cast<std::size_t>(x[static_cast<std::size_t>(t)])];
      if (!fired[static_cast<std::size_t>(t)]) continue;
      hits += p * hit_of(t, false);
      queries += p;
      if (first) {
        first_hits += p * hit_of(t, true);
        first_queries += p;
      }
      first = false;
    }
  });
  return {hits / queries, first_hits / first_queries};
}

// Checks `posterior(counts, x_t)` against the mass of each x_0 over every enumerated prefix
// x_0..x_t whose x_t fires (with `first`, as the row's first fire), grouped by (the prefix's
// multiset, x_t); returns how many of those groups leave x_0 uncertain (so that the check tests
// more than certainties).
template <typename Enumerate, typename Posterior>
int check_posterior_against_enumeration(const p0sim::sim::DataConfig& c, int t, bool first, Enumerate enumerate,
                                        Posterior posterior) {
  std::map<std::vector<long>, std::vector<double>> joint;  // multiset + x_t -> mass of each x_0
  enumerate(c, t + 1, [&](const std::vector<int>& x, const std::vector<bool>& fired, double p) {
    if (!fired[static_cast<std::size_t>(t)]) return;
    if (first && std::find(fired.begin(), fired.begin() + t, true) != fired.begin() + t) return;
    std::vector<long> counts(static_cast<std::size_t>(c.vocab), 0);
    for (int a : x) ++counts[static_cast<std::size_t>(a)];
    counts.push_back(x[static_cast<std::size_t>(t)]);
    auto& row = joint[counts];
    row.resize(static_cast<std::size_t>(c.vocab), 0.0);
    row[static_cast<std::size_t>(x[0])] += p;
  });
  REQUIRE(joint.size() > 3);
  int ambiguous = 0;
  for (const auto& [key, mass] : joint) {
    const int trigger = static_cast<int>(key.back());
    const std::vector<long> counts(key.begin(), key.end() - 1);
    double total = 0.0, top = 0.0;
    for (double m : mass) {
      total += m;
      top = std::max(top, m);
    }
    ambiguous += top < total * (1.0 - 1e-9);
    const std::vector<double> post = posterior(counts, trigger);
    for (std::size_t a = 0; a < mass.size(); ++a) CHECK_THAT(post[a], WithinAbs(mass[a] / total, 1e-12));
  }
  return ambiguous;
}

}  // namespace

TEST_CASE("the content posterior of x_0 equals the row law's, enumerated", "[chance]") {
  const auto c = GENERATE(firstrecall(5, 2, 0.3, 8), firstrecall(4, 1, 0.45, 8), firstrecall(6, 3, 0.1, 8));
  const int t = GENERATE(1, 2, 3, 4, 5);
  const bool first = GENERATE(false, true);
  const int ambiguous = check_posterior_against_enumeration(
      c, t, first, enumerate_rows, [&](const std::vector<long>& counts, int trigger) {
        return firstrecall_content_posterior(counts, t, trigger, c, first);
      });
  if (t >= 2) CHECK(ambiguous > 0);
}

TEST_CASE("the sampled content-only accuracy converges to the enumerated Bayes accuracy", "[chance]") {
  // Small tasks whose every row can be enumerated: firstrecall V = 4 (1 trigger), T = 6, q = 0.3;
  // firstrecall-lookup with one key, two values, one trigger and one filler, T = 6, q = 0.25.
  const bool lookup = GENERATE(false, true);
  const auto c = lookup ? frlookup(1, 2, 1, 1, 0.25, 6) : firstrecall(4, 1, 0.3, 6);
  const p0sim::sim::DataGenerator gen(c);
  const auto [exact, exact_first] =
      lookup ? enumerated_accuracy(c, enumerate_lookup_rows,
                                   [&](const std::vector<long>& counts, int, int trigger, bool first) {
                                     return firstrecall_lookup_content_posterior(counts, trigger, gen, first);
                                   })
             : enumerated_accuracy(c, enumerate_rows,
                                   [&](const std::vector<long>& counts, int t, int trigger, bool first) {
                                     return firstrecall_content_posterior(counts, t, trigger, c, first);
                                   });
  const long rows = 200000;
  const ContentOnlyChance s = content_only_chance(c, rows);
  // Each average is a ratio over ~queries Bernoulli-like hits; 5 binomial standard errors
  // sqrt(p(1-p)/queries) bound its sampling error (rows are independent, queries in a row are
  // not, which the factor 5 covers: at most ~3 queries share a row here).
  const double se = std::sqrt(exact * (1 - exact) / static_cast<double>(s.queries));
  const double se_first = std::sqrt(exact_first * (1 - exact_first) / static_cast<double>(s.first_queries));
  CHECK_THAT(s.trigger_accuracy, WithinAbs(exact, 5 * se));
  CHECK_THAT(s.first_trigger_accuracy, WithinAbs(exact_first, 5 * se_first));
  CHECK(s.rows == rows);
  CHECK(s.first_queries <= s.queries);
  // and it is above guessing one of the prefix's distinct tokens, which is what it should beat
  CHECK(exact_first > 0.5);
}

TEST_CASE("the firstrecall-lookup content posterior of x_0 equals the row law's, enumerated", "[chance]") {
  // one key and two values; two keys sharing one value token (answers fit either key's queries);
  // two keys and two values
  const auto c = GENERATE(frlookup(1, 2, 1, 1, 0.25, 8), frlookup(2, 1, 2, 2, 0.2, 8), frlookup(2, 2, 1, 1, 0.3, 8));
  const int t = GENERATE(1, 2, 3, 4, 5);
  const bool first = GENERATE(false, true);
  const p0sim::sim::DataGenerator gen(c);
  const int ambiguous = check_posterior_against_enumeration(
      c, t, first, enumerate_lookup_rows, [&](const std::vector<long>& counts, int trigger) {
        return firstrecall_lookup_content_posterior(counts, trigger, gen, first);
      });
  if (t >= 2) CHECK(ambiguous > 0);
}

TEST_CASE("the content-only chance level is refused for tasks without its closed form", "[chance]") {
  auto c = firstrecall(16, 2, 0.1, 8);
  c.filler = p0sim::sim::Filler::markov;
  CHECK_THROWS_AS(content_only_chance(c, 10), std::invalid_argument);
  c = firstrecall(16, 2, 0.1, 8);
  c.task = p0sim::sim::Task::backcopy_indep;
  CHECK_THROWS_AS(content_only_chance(c, 10), std::invalid_argument);
  auto l = frlookup(2, 2, 1, 1, 0.3, 8);
  l.task = p0sim::sim::Task::lookup;
  CHECK_THROWS_AS(content_only_chance(l, 10), std::invalid_argument);
  // firstrecall-lookup past the length its order count is affordable at
  CHECK(has_content_posterior(frlookup(4, 8, 4, 15, 0.1, kLookupChanceMaxT)));
  CHECK_FALSE(has_content_posterior(frlookup(4, 8, 4, 15, 0.1, kLookupChanceMaxT + 1)));
  CHECK_THROWS_AS(content_only_chance(frlookup(4, 8, 4, 15, 0.1, kLookupChanceMaxT + 1), 10), std::invalid_argument);
  // x_t not a trigger
  const p0sim::sim::DataGenerator gen(frlookup(2, 2, 1, 1, 0.3, 8));
  std::vector<long> counts(static_cast<std::size_t>(gen.config().vocab), 0);
  counts[9] = 1;  // the filler (values 0-1, facts 2-5, queries 6-7, none 8, filler 9, trigger 10)
  CHECK_THROWS_AS(firstrecall_lookup_content_posterior(counts, 9, gen), std::invalid_argument);
  // counts that no row can have: x_t is not a trigger, or not among them
  CHECK_THROWS_AS(
      firstrecall_content_posterior({2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 2, 0, firstrecall(16, 2, 0.1, 8)),
      std::invalid_argument);
  CHECK_THROWS_AS(firstrecall_content_posterior({2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 2, 15,
                                                firstrecall(16, 2, 0.1, 8)),
                  std::invalid_argument);
}

TEST_CASE("a bootstrap interval of a mean stays inside the values and repeats bit for bit", "[stats]") {
  const std::vector<std::vector<double>> samples = {{0.0, 0.0, 1.0}, {0.9, 1.0, 1.0, 1.0}, {-1.0, 0.5, 0.99}};
  for (const auto& x : samples) {
    const Interval b = bootstrap_mean_interval(x, 0.95);
    const double lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
    // a mean of values is within their range up to the rounding of the sum
    CHECK(b.lo >= lo - 1e-15);
    CHECK(b.hi <= hi + 1e-15);
    CHECK(b.lo <= b.mean);
    CHECK(b.mean <= b.hi);
    const Interval again = bootstrap_mean_interval(x, 0.95);
    CHECK(again.lo == b.lo);
    CHECK(again.hi == b.hi);
  }
  CHECK(bootstrap_mean_interval({0.3, 0.3, 0.3}, 0.95).lo == 0.3);
  CHECK(std::isnan(bootstrap_mean_interval({0.3}, 0.95).lo));
}

TEST_CASE("for a large normal sample the bootstrap interval approaches the Student-t interval", "[stats]") {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(2.0, 3.0);
  std::vector<double> x(400);
  for (double& v : x) v = normal(rng);
  p0sim::RunningStats t;
  for (double v : x) t.add(v);
  const Interval b = bootstrap_mean_interval(x, 0.95);
  // The bootstrap half-width estimates the same standard error, with a relative Monte-Carlo error
  // of about 1/sqrt(2 * 10000) from the resamples and a bias of order 1/n; 5% covers both.
  CHECK_THAT(b.hi - b.lo, WithinRel(2.0 * t.ci_half_width(0.95), 0.05));
  const Interval d = bootstrap_difference_interval(x, {0.0, 0.1, -0.1, 0.05}, 0.95);
  CHECK_THAT(d.mean, WithinAbs(t.mean - 0.0125, 1e-12));  // minus the second sample's mean
  CHECK(d.lo < d.mean);
  CHECK(d.hi > d.mean);
}

TEST_CASE("Clopper-Pearson bounds match their closed forms at the edges and the textbook middle", "[stats]") {
  // k = 0: the upper bound solves (1-p)^n = alpha/2; k = n: the lower bound solves p^n = alpha/2.
  const int n = GENERATE(1, 3, 10, 40);
  const Proportion none = clopper_pearson(0, n, 0.95), all = clopper_pearson(n, n, 0.95);
  CHECK(none.lo == 0.0);
  CHECK_THAT(none.hi, WithinRel(1.0 - std::pow(0.025, 1.0 / n), 1e-9));
  CHECK(all.hi == 1.0);
  CHECK_THAT(all.lo, WithinRel(std::pow(0.025, 1.0 / n), 1e-9));
  // 5 of 10: [0.187086, 0.812914] (symmetric, beta quantiles of Beta(5,6) and Beta(6,5))
  const Proportion half = clopper_pearson(5, 10, 0.95);
  CHECK_THAT(half.lo, WithinAbs(0.187086, 1e-6));
  CHECK_THAT(half.hi, WithinAbs(0.812914, 1e-6));
  CHECK(std::isnan(clopper_pearson(0, 0, 0.95).p));
}

TEST_CASE("Cohen's d divides the difference of means by the pooled deviation", "[stats]") {
  // a = {1, 3}: mean 2, m2 = 2; b = {0, 0, 3}: mean 1, m2 = 6; pooled sd = sqrt(8 / 3).
  CHECK_THAT(cohens_d({1.0, 3.0}, {0.0, 0.0, 3.0}), WithinRel(1.0 / std::sqrt(8.0 / 3.0), 1e-12));
  CHECK(cohens_d({1.0, 1.0}, {0.0, 0.0}) == std::numeric_limits<double>::infinity());
  CHECK(cohens_d({1.0, 1.0}, {1.0, 1.0}) == 0.0);
  CHECK(std::isnan(cohens_d({1.0}, {0.0})));
}

}  // namespace study_chance_levels_test
