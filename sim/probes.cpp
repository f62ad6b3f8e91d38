#include "sim/probes.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace p0sim::sim {
namespace {

double median(std::vector<double> values) {
  const std::size_t n = values.size();
  std::nth_element(values.begin(), values.begin() + static_cast<long>(n / 2), values.end());
  double upper = values[n / 2];
  if (n % 2 == 1) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + static_cast<long>(n / 2));
  return 0.5 * (lower + upper);
}

// The k-th smallest (0-based) |x_i| of n floats. A non-negative float's bit pattern orders as its
// value, so one counting pass over the high 16 bits finds the k-th value's bucket and a second over
// the low 16 bits of that bucket's values finds the value: O(n), no copy, no sort.
float kth_magnitude(const float* x, std::size_t n, std::size_t k, std::vector<std::uint32_t>& counts) {
  constexpr std::uint32_t kAbs = 0x7fffffffu;
  auto select = [&](auto bucket_of, auto in_range) {
    std::fill(counts.begin(), counts.end(), 0u);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t bits = std::bit_cast<std::uint32_t>(x[i]) & kAbs;
      if (in_range(bits)) ++counts[bucket_of(bits)];
    }
    std::uint32_t b = 0;
    for (; k >= counts[b]; ++b) k -= counts[b];
    return b;
  };
  const std::uint32_t high = select([](std::uint32_t bits) { return bits >> 16; }, [](std::uint32_t) { return true; });
  const std::uint32_t low = select([](std::uint32_t bits) { return bits & 0xffffu; },
                                   [high](std::uint32_t bits) { return (bits >> 16) == high; });
  return std::bit_cast<float>((high << 16) | low);
}

}  // namespace

template <typename Scalar>
double median_magnitude(const Scalar* x, std::size_t n) {
  if constexpr (std::is_same_v<Scalar, float>) {
    std::vector<std::uint32_t> counts(std::size_t{1} << 16);
    const double upper = kth_magnitude(x, n, n / 2, counts);
    if (n % 2 == 1) return upper;
    return 0.5 * (double(kth_magnitude(x, n, n / 2 - 1, counts)) + upper);
  } else {
    std::vector<double> magnitudes(n);
    for (std::size_t i = 0; i < n; ++i) magnitudes[i] = std::fabs(double(x[i]));
    return median(std::move(magnitudes));
  }
}

template <typename Scalar>
StateMetrics state_metrics(const Scalar* hidden, int N, int P, int C) {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  // (N,P,C) row-major == column-major C x (N*P): column n*P + t is h_{n,t}.
  Eigen::Map<const Matrix> h(hidden, C, static_cast<Eigen::Index>(N) * P);
  std::vector<double> mean_norm(static_cast<std::size_t>(P), 0.0);
  Eigen::VectorXd unit_sum = Eigen::VectorXd::Zero(C);
  double max_abs_p0 = 0, max_abs_rest = 0;
  for (int n = 0; n < N; ++n) {
    for (int t = 0; t < P; ++t) {
      const auto col = h.col(static_cast<Eigen::Index>(n) * P + t).template cast<double>();
      const double norm = col.norm();
      mean_norm[static_cast<std::size_t>(t)] += norm / N;
      if (t == 0) {
        if (norm > 0) unit_sum += col / norm;
        max_abs_p0 = std::max(max_abs_p0, col.cwiseAbs().maxCoeff());
      } else {
        max_abs_rest = std::max(max_abs_rest, col.cwiseAbs().maxCoeff());
      }
    }
  }
  StateMetrics m;
  m.p0_norm = mean_norm[0];
  m.rest_norm = median(std::vector<double>(mean_norm.begin() + 1, mean_norm.end()));
  m.p0_norm_ratio = m.p0_norm / m.rest_norm;
  m.p1_norm_ratio = mean_norm[1] / m.rest_norm;
  // Mean pairwise cosine of n unit vectors: (||sum u_i||^2 - n) / (n(n-1)).
  m.p0_cos = (unit_sum.squaredNorm() - N) / (static_cast<double>(N) * (N - 1));
  const double median_abs = median_magnitude(h.data(), static_cast<std::size_t>(h.size()));
  m.massive_ratio = max_abs_p0 / median_abs;
  m.massive_ratio_rest = max_abs_rest / median_abs;
  return m;
}

template <typename Scalar>
std::vector<HeadAttention> head_attention(const Scalar* attn, int N, int H, int P, bool normalise_rows,
                                          const std::vector<char>* active, double eps) {
  std::vector<HeadAttention> heads(static_cast<std::size_t>(H));
  for (int hd = 0; hd < H; ++hd) {
    double to0 = 0, to1 = 0, active0 = 0, rest0 = 0, sinking = 0;
    long active_count = 0, rest_count = 0;
    for (int n = 0; n < N; ++n) {
      const Scalar* a = attn + (static_cast<long>(n) * H + hd) * P * P;
      double seq_to0 = 0, seq_to1 = 0;
      for (int t = 0; t < P; ++t) {
        const Scalar* row = a + static_cast<long>(t) * P;
        double scale = 1.0;
        if (normalise_rows) {
          double total = 0;
          for (int k = 0; k < P; ++k) total += std::fabs(double(row[k]));
          scale = total > 0 ? 1.0 / total : 0.0;
        }
        auto weight = [&](int key) { return normalise_rows ? std::fabs(double(row[key])) * scale : double(row[key]); };
        const double a0 = weight(0);
        seq_to0 += a0;
        if (t >= 1) seq_to1 += weight(1);
        if (active != nullptr && (*active)[static_cast<std::size_t>(n) * P + t]) {
          active0 += a0;
          ++active_count;
        } else {
          rest0 += a0;
          ++rest_count;
        }
      }
      to0 += seq_to0 / P;
      if (seq_to0 / P > eps) sinking += 1;
      if (P > 1) to1 += seq_to1 / (P - 1);
    }
    heads[static_cast<std::size_t>(hd)].attn_to_0 = to0 / N;
    heads[static_cast<std::size_t>(hd)].sink_share = sinking / N;
    heads[static_cast<std::size_t>(hd)].attn_to_1 = P > 1 ? to1 / N : std::numeric_limits<double>::quiet_NaN();
    heads[static_cast<std::size_t>(hd)].attn_to_0_active =
        active_count > 0 ? active0 / active_count : std::numeric_limits<double>::quiet_NaN();
    heads[static_cast<std::size_t>(hd)].attn_to_0_rest =
        rest_count > 0 ? rest0 / rest_count : std::numeric_limits<double>::quiet_NaN();
  }
  return heads;
}

SinkMetrics sink_metrics(const std::vector<HeadAttention>& heads, double eps) {
  SinkMetrics s;
  for (const auto& h : heads) {
    if (h.attn_to_0 > eps) s.sink_rate += 1;
    s.attn_to_0 += h.attn_to_0;
    s.attn_to_1 += h.attn_to_1;
    s.sink_1 += h.sink_share;
  }
  const double count = static_cast<double>(heads.size());
  s.sink_rate /= count;
  s.attn_to_0 /= count;
  s.attn_to_1 /= count;
  s.sink_1 /= count;
  return s;
}

template StateMetrics state_metrics<float>(const float*, int, int, int);
template double median_magnitude<float>(const float*, std::size_t);
template double median_magnitude<double>(const double*, std::size_t);
template StateMetrics state_metrics<double>(const double*, int, int, int);
template std::vector<HeadAttention> head_attention<float>(const float*, int, int, int, bool, const std::vector<char>*,
                                                          double);
template std::vector<HeadAttention> head_attention<double>(const double*, int, int, int, bool, const std::vector<char>*,
                                                           double);

}  // namespace p0sim::sim
