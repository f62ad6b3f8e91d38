// The content-only chance level of firstrecall (the Bayes-optimal accuracy of an observer that
// sees the multiset of the prefix, not its order) against brute-force enumeration of the row law,
// and the bounded statistics the verdict reports (bootstrap percentiles, Clopper-Pearson).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "common/stats.hpp"
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

}  // namespace

TEST_CASE("the content posterior of x_0 equals the row law's, enumerated", "[chance]") {
  const auto c = GENERATE(firstrecall(5, 2, 0.3, 8), firstrecall(4, 1, 0.45, 8), firstrecall(6, 3, 0.1, 8));
  const int t = GENERATE(1, 2, 3, 4, 5);
  // joint[multiset][a] = P(x_0 = a, the prefix's multiset, x_t fires)
  std::map<std::vector<long>, std::vector<double>> joint;
  enumerate_rows(c, t + 1, [&](const std::vector<int>& x, const std::vector<bool>& fired, double p) {
    if (!fired[static_cast<std::size_t>(t)]) return;
    std::vector<long> counts(static_cast<std::size_t>(c.vocab), 0);
    for (int a : x) ++counts[static_cast<std::size_t>(a)];
    auto& row = joint[counts];
    row.resize(static_cast<std::size_t>(c.vocab), 0.0);
    row[static_cast<std::size_t>(x[0])] += p;
  });
  REQUIRE(joint.size() > 3);
  for (const auto& [counts, mass] : joint) {
    double total = 0.0;
    for (double m : mass) total += m;
    const std::vector<double> post = firstrecall_content_posterior(counts, t, c);
    for (std::size_t a = 0; a < mass.size(); ++a) CHECK_THAT(post[a], WithinAbs(mass[a] / total, 1e-12));
  }
}

TEST_CASE("the sampled content-only accuracy converges to the enumerated Bayes accuracy", "[chance]") {
  // A small task whose every row can be enumerated: V = 4 (1 trigger), T = 6, q = 0.3.
  const auto c = firstrecall(4, 1, 0.3, 6);
  double hits = 0.0, queries = 0.0, first_hits = 0.0, first_queries = 0.0;
  enumerate_rows(c, c.seq_len, [&](const std::vector<int>& x, const std::vector<bool>& fired, double p) {
    std::vector<long> counts(static_cast<std::size_t>(c.vocab), 0);
    bool first = true;
    for (int t = 0; t < c.seq_len; ++t) {
      ++counts[static_cast<std::size_t>(x[static_cast<std::size_t>(t)])];
      if (!fired[static_cast<std::size_t>(t)]) continue;
      const std::vector<double> post = firstrecall_content_posterior(counts, t, c);
      const double best = *std::max_element(post.begin(), post.end());
      int ties = 0;
      for (double v : post) ties += v >= best * (1.0 - 1e-12);
      const double hit = post[static_cast<std::size_t>(x[0])] >= best * (1.0 - 1e-12) ? 1.0 / ties : 0.0;
      hits += p * hit;
      queries += p;
      if (first) {
        first_hits += p * hit;
        first_queries += p;
      }
      first = false;
    }
  });
  const long rows = 200000;
  const ContentOnlyChance s = firstrecall_content_only_chance(c, rows);
  const double exact = hits / queries, exact_first = first_hits / first_queries;
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

TEST_CASE("the content-only chance level is refused for tasks without its closed form", "[chance]") {
  auto c = firstrecall(16, 2, 0.1, 8);
  c.filler = p0sim::sim::Filler::markov;
  CHECK_THROWS_AS(firstrecall_content_only_chance(c, 10), std::invalid_argument);
  c = firstrecall(16, 2, 0.1, 8);
  c.task = p0sim::sim::Task::backcopy_indep;
  CHECK_THROWS_AS(firstrecall_content_only_chance(c, 10), std::invalid_argument);
  // counts that no row can have: no trigger at all
  CHECK_THROWS_AS(
      firstrecall_content_posterior({2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 2, firstrecall(16, 2, 0.1, 8)),
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
