#pragma once
// The metrics of DESIGN.md section 5, computed from one layer's hidden states and attention
// weights of a probe batch. Pure functions of arrays, so they can be tested on hand-built inputs
// and applied to arrays loaded from `p0sim eval` as well as to a model during training.
// Legend: N probe sequences, P positions, C d_model, H heads.
#include <cstddef>
#include <array>
#include <vector>

namespace p0sim::sim {

struct StateMetrics {
  double p0_norm = 0;             // mean over sequences of ||h_0||
  double rest_norm = 0;           // median over t >= 1 of the mean over sequences of ||h_t||
  double p0_norm_ratio = 0;       // p0_norm / rest_norm
  double p1_norm_ratio = 0;       // mean ||h_1|| / rest_norm (the transitional stage spreads to position 1)
  double p0_cos = 0;              // mean pairwise cosine of h_0 across sequences
  double massive_ratio = 0;       // max_{n,i} |h_{n,0,i}| / median_{n,t,i} |h_{n,t,i}|
  double massive_ratio_rest = 0;  // max_{n,t>=1,i} |h_{n,t,i}| / the same median (elsewhere than P0)
};

// hidden: (N,P,C) row-major; needs N >= 2 (p0_cos is pairwise) and P >= 2.
template <typename Scalar>
StateMetrics state_metrics(const Scalar* hidden, int N, int P, int C);

// The median of |x_i| over n > 0 values (the mean of the two middle ones for even n), exactly as a
// sort would give it: for floats, found by counting passes over the bit patterns, without a copy.
template <typename Scalar>
double median_magnitude(const Scalar* x, std::size_t n);

struct HeadAttention {
  double attn_to_0 = 0;         // alpha_0: mean over queries t >= 0 of A[t,0], averaged over sequences
  double attn_to_1 = 0;         // alpha_1: mean over queries t >= 1 of A[t,1]
  double attn_to_0_active = 0;  // mean of A[t,0] over the task's active queries (NaN if none)
  double attn_to_0_rest = 0;    // mean of A[t,0] over every other query (t = 0 included)
  double sink_share = 0;        // fraction of sequences whose own alpha_0 exceeds eps
  double value_out_norm_0 = 0;  // mean over sequences of |W_o,h v_0,h|: what the head adds when it attends to 0 only
};

// The per-head metrics, declared once: heads.csv's columns, summary.json's heads and checkpoints
// follow this order.
struct HeadMetric {
  const char* name;
  const char* definition;
  double HeadAttention::*field;
};
inline constexpr std::array<HeadMetric, 6> kHeadMetrics = {{
    {"attn_to_0", "alpha_0: mean over queries t >= 0 of the attention to key 0", &HeadAttention::attn_to_0},
    {"attn_to_1", "alpha_1: mean over queries t >= 1 of the attention to key 1", &HeadAttention::attn_to_1},
    {"attn_to_0_active", "mean attention to key 0 over the task's active (trigger, query) positions; empty if none",
     &HeadAttention::attn_to_0_active},
    {"attn_to_0_rest",
     "mean attention to key 0 over the other queries (position 0 included): Guo et al.'s dormant-head measure",
     &HeadAttention::attn_to_0_rest},
    {"sink_share", "fraction of probe sequences whose own alpha_0 exceeds sink-eps (Gu et al.'s Sink_1 per head)",
     &HeadAttention::sink_share},
    {"value_out_norm_0", "|W_o,h v_0,h| (mean over sequences): the head's output when it attends to key 0 alone",
     &HeadAttention::value_out_norm_0},
}};

// attn: (N,H,P,P), row = query, column = key. normalise_rows: divide each row by its sum of
// absolute values first (the proxy for unnormalised sigmoid attention). active: (N,P) flags of
// active query positions (trigger or query tokens), or nullptr. eps: the sink threshold of
// sink_share.
template <typename Scalar>
std::vector<HeadAttention> head_attention(const Scalar* attn, int N, int H, int P, bool normalise_rows,
                                          const std::vector<char>* active, double eps);

struct SinkMetrics {
  double sink_rate = 0;  // fraction of heads with alpha_0 > eps
  double attn_to_0 = 0;  // mean over heads of alpha_0
  double attn_to_1 = 0;  // mean over heads of alpha_1
  // Gu et al.'s (2025) Sink_1 at this layer: the fraction of (sequence, head) pairs whose alpha_0
  // (the mean over queries t >= 0 of A[t,0], in that one sequence) exceeds eps.
  double sink_1 = 0;
};
SinkMetrics sink_metrics(const std::vector<HeadAttention>& heads, double eps);

// The first layer whose heads count for the sink claim, in a model of L layers: the heads of a
// later layer read a P0 state that earlier layers built (with one layer there is no later one, so
// layer 0). Every sink measure (emergence, verdicts, results, plots) reads its layers from here.
inline int first_sink_layer(int L) { return L > 1 ? 1 : 0; }

}  // namespace p0sim::sim
