// Metric functions on hand-built hidden states and attention arrays with known answers.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sim/probes.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_probes_metrics_test {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using p0sim::sim::head_attention;
using p0sim::sim::sink_metrics;
using p0sim::sim::state_metrics;

namespace {

// (N,P,C) with h_{n,0} = p0[n] and h_{n,t} = rest(n,t) for t >= 1.
std::vector<double> make_hidden(int N, int P, int C, const std::vector<std::vector<double>>& p0, double rest_scale) {
  std::vector<double> h(static_cast<std::size_t>(N * P * C), 0.0);
  for (int n = 0; n < N; ++n) {
    for (int c = 0; c < C; ++c) h[static_cast<std::size_t>((n * P + 0) * C + c)] = p0[n][c];
    for (int t = 1; t < P; ++t) {
      // alternate the unit direction so positions differ but every norm equals rest_scale
      h[static_cast<std::size_t>((n * P + t) * C + (t + n) % C)] = (t % 2 ? 1.0 : -1.0) * rest_scale;
    }
  }
  return h;
}

// Uniform causal attention: A[t,k] = 1/(t+1) for k <= t.
std::vector<double> uniform_causal(int N, int H, int P) {
  std::vector<double> a(static_cast<std::size_t>(N * H * P * P), 0.0);
  for (int nh = 0; nh < N * H; ++nh)
    for (int t = 0; t < P; ++t)
      for (int k = 0; k <= t; ++k) a[static_cast<std::size_t>((nh * P + t) * P + k)] = 1.0 / (t + 1);
  return a;
}

}  // namespace

TEST_CASE("a high-norm P0 in a fixed direction gives the expected ratio, cosine and massive ratio", "[probes]") {
  const int N = 3, P = 5, C = 4;
  auto h = make_hidden(N, P, C, {{10, 0, 0, 0}, {10, 0, 0, 0}, {10, 0, 0, 0}}, 1.0);
  auto m = state_metrics(h.data(), N, P, C);
  CHECK_THAT(m.p0_norm, WithinRel(10.0, 1e-12));
  CHECK_THAT(m.rest_norm, WithinRel(1.0, 1e-12));
  CHECK_THAT(m.p0_norm_ratio, WithinRel(10.0, 1e-12));
  CHECK_THAT(m.p1_norm_ratio, WithinRel(1.0, 1e-12));
  CHECK_THAT(m.p0_cos, WithinRel(1.0, 1e-12));
  // |h| entries: 3 entries of 10, 12 entries of 1, the rest 0 (60 in all): median 0 -> ratio inf;
  // so check on a dense variant below instead.
  std::vector<double> dense(h.size(), 0.5);
  for (int n = 0; n < N; ++n) dense[static_cast<std::size_t>(n * P * C)] = 8.0;
  auto md = state_metrics(dense.data(), N, P, C);
  CHECK_THAT(md.massive_ratio, WithinRel(16.0, 1e-12));
}

TEST_CASE("P0 states in orthogonal or opposite directions have the pairwise cosine they should", "[probes]") {
  const int P = 3, C = 2;
  auto orthogonal = make_hidden(2, P, C, {{1, 0}, {0, 1}}, 1.0);
  CHECK_THAT(state_metrics(orthogonal.data(), 2, P, C).p0_cos, WithinAbs(0.0, 1e-12));
  auto opposite = make_hidden(2, P, C, {{2, 0}, {-3, 0}}, 1.0);
  CHECK_THAT(state_metrics(opposite.data(), 2, P, C).p0_cos, WithinAbs(-1.0, 1e-12));
  // three unit vectors at 120 degrees: each pair has cosine -1/2
  auto tri = make_hidden(3, P, C, {{1, 0}, {-0.5, 0.8660254037844386}, {-0.5, -0.8660254037844386}}, 1.0);
  CHECK_THAT(state_metrics(tri.data(), 3, P, C).p0_cos, WithinAbs(-0.5, 1e-12));
}

TEST_CASE("rest_norm is the median over positions of the mean norm", "[probes]") {
  const int N = 2, P = 4, C = 1;
  // position norms (mean over n): t=1: 1, t=2: 5, t=3: 2 -> median 2
  std::vector<float> h = {3, 1, 5, 2, 3, -1, -5, 2};
  auto m = state_metrics(h.data(), N, P, C);
  CHECK_THAT(m.rest_norm, WithinRel(2.0, 1e-7));
  CHECK_THAT(m.p0_norm_ratio, WithinRel(1.5, 1e-7));
}

TEST_CASE("uniform causal attention has the harmonic sink scores and no sink", "[probes]") {
  const int N = 2, H = 3, P = 4;
  auto a = uniform_causal(N, H, P);
  auto heads = head_attention(a.data(), N, H, P, false, nullptr, 0.3);
  const double alpha0 = (1.0 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 4;
  const double alpha1 = (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3;
  for (const auto& h : heads) {
    CHECK_THAT(h.attn_to_0, WithinRel(alpha0, 1e-12));
    CHECK_THAT(h.attn_to_1, WithinRel(alpha1, 1e-12));
  }
  auto s = sink_metrics(heads, 0.6);
  CHECK(s.sink_rate == 0.0);  // alpha0 = 0.52 < 0.6
  CHECK_THAT(sink_metrics(heads, 0.3).sink_rate, WithinAbs(1.0, 0));
}

TEST_CASE("a head that puts all its attention on key 0 is counted as a sink, others not", "[probes]") {
  const int N = 1, H = 2, P = 4;
  auto a = uniform_causal(N, H, P);
  for (int t = 0; t < P; ++t)
    for (int k = 0; k < P; ++k) a[static_cast<std::size_t>((1 * P + t) * P + k)] = k == 0 ? 1.0 : 0.0;
  // head 0: attend to self (diagonal)
  for (int t = 0; t < P; ++t)
    for (int k = 0; k < P; ++k) a[static_cast<std::size_t>((0 * P + t) * P + k)] = k == t ? 1.0 : 0.0;
  std::vector<char> active = {0, 1, 0, 1};
  auto heads = head_attention(a.data(), N, H, P, false, &active, 0.3);
  CHECK_THAT(heads[1].attn_to_0, WithinRel(1.0, 1e-12));
  CHECK_THAT(heads[1].attn_to_0_active, WithinRel(1.0, 1e-12));
  CHECK_THAT(heads[0].attn_to_0, WithinRel(0.25, 1e-12));
  CHECK_THAT(heads[0].attn_to_0_active, WithinAbs(0.0, 1e-12));
  // the other queries, 0 and 2: head 0 attends to key 0 only from query 0
  CHECK_THAT(heads[0].attn_to_0_rest, WithinRel(0.5, 1e-12));
  CHECK_THAT(heads[1].attn_to_0_rest, WithinRel(1.0, 1e-12));
  auto s = sink_metrics(heads, 0.3);
  CHECK_THAT(s.sink_rate, WithinRel(0.5, 1e-12));
  CHECK_THAT(s.attn_to_0, WithinRel(0.625, 1e-12));
}

TEST_CASE("unnormalised (sigmoid) attention is scored by its row-normalised magnitudes", "[probes]") {
  const int N = 1, H = 1, P = 3;
  // every allowed entry 0.2 (causal): normalised rows are uniform over the prefix
  std::vector<double> a(P * P, 0.0);
  for (int t = 0; t < P; ++t)
    for (int k = 0; k <= t; ++k) a[static_cast<std::size_t>(t * P + k)] = 0.2;
  auto raw = head_attention(a.data(), N, H, P, false, nullptr, 0.3);
  auto norm = head_attention(a.data(), N, H, P, true, nullptr, 0.3);
  CHECK_THAT(raw[0].attn_to_0, WithinRel(0.2, 1e-12));
  CHECK_THAT(norm[0].attn_to_0, WithinRel((1.0 + 0.5 + 1.0 / 3) / 3, 1e-12));
}

TEST_CASE("the median of float magnitudes is the sorted median exactly, for odd and even counts and ties", "[probes]") {
  const std::size_t n = GENERATE(1, 2, 7, 8, 1001, 4096);
  const bool ties = GENERATE(false, true);
  std::mt19937 rng(static_cast<unsigned>(n) * 2 + ties);
  // signed values over many binades (so they spread over high-16-bit buckets), or a few repeated
  // values (so the middle elements tie), plus zeros of both signs
  std::lognormal_distribution<float> spread(0.0f, 4.0f);
  std::uniform_int_distribution<int> few(0, 3);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = ties ? 0.25f * static_cast<float>(few(rng)) : spread(rng);
    x[i] = (i % 3 == 0 ? -1.0f : 1.0f) * (i % 17 == 5 ? 0.0f : v);
  }
  std::vector<double> sorted(n);
  for (std::size_t i = 0; i < n; ++i) sorted[i] = std::fabs(static_cast<double>(x[i]));
  std::sort(sorted.begin(), sorted.end());
  const double expected = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  CAPTURE(n, ties);
  CHECK(p0sim::sim::median_magnitude(x.data(), n) == expected);
  std::vector<double> xd(x.begin(), x.end());
  CHECK(p0sim::sim::median_magnitude(xd.data(), n) == expected);
}

TEST_CASE("Sink_1 counts (sequence, head) pairs over eps, where the sink rate thresholds each head's batch mean",
          "[probes]") {
  const int N = 4, H = 2, P = 4;
  auto a = uniform_causal(N, H, P);  // alpha_0 = (1 + 1/2 + 1/3 + 1/4) / 4 = 0.52 per sequence
  for (int n = 0; n < 2; ++n)        // head 0 of sequences 0 and 1: every query on key 0 (alpha_0 = 1)
    for (int t = 0; t < P; ++t)
      for (int k = 0; k < P; ++k) a[static_cast<std::size_t>(((n * H + 0) * P + t) * P + k)] = k == 0 ? 1.0 : 0.0;
  const auto heads = head_attention(a.data(), N, H, P, false, nullptr, 0.6);
  CHECK(heads[0].sink_share == 0.5);
  CHECK(heads[1].sink_share == 0.0);
  const auto s = sink_metrics(heads, 0.6);
  CHECK(s.sink_1 == 0.25);    // 2 of the 8 (sequence, head) pairs
  CHECK(s.sink_rate == 0.5);  // head 0's batch mean, (1 + 1 + 0.52 + 0.52) / 4 = 0.76, passes 0.6
}

TEST_CASE("the massive ratio away from position 0 is the largest later magnitude over the median magnitude",
          "[probes]") {
  // N = 2, P = 3, C = 2: magnitudes 8,1 | 1,2 | 6,1 and 4,1 | 1,1 | 1,3; median of the 12 is 1.
  const std::vector<double> h = {8, -1, 1, 2, -6, 1, 4, 1, 1, -1, 1, 3};
  const auto m = state_metrics(h.data(), 2, 3, 2);
  CHECK(m.massive_ratio == 8.0);
  CHECK(m.massive_ratio_rest == 6.0);
}

}  // namespace sim_probes_metrics_test
