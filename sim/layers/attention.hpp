#pragma once
// Scaled dot-product attention per sequence and head.
// Legend and layout: sim/layers/tensor.hpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "sim/gemm.hpp"
#include "sim/layers/tensor.hpp"
#include "sim/model_enums.hpp"

namespace p0sim::sim::layers {

// One attention sequence inside the batch: columns offset..offset+len-1 hold positions 0..len-1;
// its probabilities sit at att_offset: H blocks of (len,len), row = query, column = key.
struct Sequence {
  Index offset = 0;
  Index len = 0;
  Index att_offset = 0;
};

enum class MaskKind { causal, full };  // key <= query, or every key of the sequence

// Fused kernels for the short sequences p0sim trains on (P up to a few hundred, D = C/H small):
// per (sequence, head) the scores, mask, softmax and A.v of a block of queries are computed from
// L1-resident panels, with no per-product call overhead and no packing, and under the causal mask
// only the keys up to the block's last query are visited. Two register-blocked kernels do all the
// arithmetic: dot_rows (a block of rows dotted with every column of a transposed panel, vectorised
// over the columns) and mix (a block of weighted sums of D-vectors, vectorised over D).
inline constexpr int kBlock = 4;  // queries (or keys) per register block
inline Index round_up(Index n, Index m) { return (n + m - 1) / m * m; }

// out[i*ldo + j] = alpha * sum_d X[i*ldx + d] * YT[d*ldy + j] for i < NB, j < len (len % kLane == 0).
template <typename S, int NB>
void dot_rows(S* out, Index ldo, const S* X, Index ldx, const S* YT, Index ldy, Index D, Index len, S alpha) {
  using Chunk = Eigen::Array<S, kLane, 1>;
  for (Index jb = 0; jb < len; jb += kLane) {
    Chunk acc[NB];
    for (int i = 0; i < NB; ++i) acc[i].setZero();
    for (Index d = 0; d < D; ++d) {
      const Eigen::Map<const Chunk> y(YT + d * ldy + jb);
      for (int i = 0; i < NB; ++i) acc[i] += X[i * ldx + d] * y;
    }
    for (int i = 0; i < NB; ++i) Eigen::Map<Chunk>(out + i * ldo + jb) = alpha * acc[i];
  }
}
// out[i*ldo + d] = alpha * sum_{j in [lo,hi)} w[i*wi + j*wj] * Y[j*ldy + d] for i < NB, d < D.
// D is covered by 16-wide chunks, then one 8-wide chunk (D = C/H = 8 is common at small C), then a
// partial chunk. Every path accumulates each output element over j in the same order with the
// same operations, so the choice of path changes speed, not bits (tests/sim_grad_layers.cpp).
// One chunk of `width` columns from db: W is its width at compile time, or Eigen::Dynamic for the
// partial chunk (at most kLane wide, so it stays on the stack).
template <typename S, int NB, int W>
void mix_chunk(S* out, Index ldo, const S* w, Index wi, Index wj, const S* Y, Index ldy, Index lo, Index hi, Index db,
               Index width, S alpha) {
  using Chunk = Eigen::Array<S, W, 1, Eigen::ColMajor, W == Eigen::Dynamic ? kLane : W, 1>;
  Chunk acc[NB];
  for (int i = 0; i < NB; ++i) acc[i].setZero(width);
  for (Index j = lo; j < hi; ++j) {
    const Eigen::Map<const Chunk> y(Y + j * ldy + db, width);
    for (int i = 0; i < NB; ++i) acc[i] += w[i * wi + j * wj] * y;
  }
  for (int i = 0; i < NB; ++i) Eigen::Map<Chunk>(out + i * ldo + db, width) = alpha * acc[i];
}
template <typename S, int NB>
void mix(S* out, Index ldo, const S* w, Index wi, Index wj, const S* Y, Index ldy, Index lo, Index hi, Index D,
         S alpha) {
  constexpr Index kHalf = kLane / 2;
  Index db = 0;
  for (; db + kLane <= D; db += kLane) mix_chunk<S, NB, kLane>(out, ldo, w, wi, wj, Y, ldy, lo, hi, db, kLane, alpha);
  if (db + kHalf <= D) {
    mix_chunk<S, NB, kHalf>(out, ldo, w, wi, wj, Y, ldy, lo, hi, db, kHalf, alpha);
    db += kHalf;
  }
  if (db < D) mix_chunk<S, NB, Eigen::Dynamic>(out, ldo, w, wi, wj, Y, ldy, lo, hi, db, D - db, alpha);
}
// Runs kernel<NB> for the nb (1..kBlock) rows of the last, partial block too.
template <typename F>
void with_block(int nb, F&& kernel) {
  switch (nb) {
    case 4:
      kernel(std::integral_constant<int, 4>{});
      break;
    case 3:
      kernel(std::integral_constant<int, 3>{});
      break;
    case 2:
      kernel(std::integral_constant<int, 2>{});
      break;
    default:
      kernel(std::integral_constant<int, 1>{});
      break;
  }
}
static_assert(kBlock == 4, "with_block dispatches blocks of up to 4 rows");

// (D,n) columns at stride ld -> (D,np) row-major panel, columns n..np-1 zero.
template <typename S>
void transpose_panel(S* out, const S* in, Index ld, Index D, Index n, Index np) {
  for (Index d = 0; d < D; ++d) {
    S* row = out + d * np;
    for (Index j = 0; j < n; ++j) row[j] = in[j * ld + d];
    std::fill(row + n, row + np, S(0));
  }
}

// Attention probabilities in place for NB score rows of len (a multiple of kLane) scores each, at
// stride ld, masked ones -infinity, one register chunk at a time. The rows' reductions are
// interleaved so the CPU overlaps their dependency chains, but each row is reduced in its own
// order (chunk by chunk, then across lanes), as alone: a block's padding chunks are -infinity
// (their max is the row's; their exp adds exact zeros), so a row's bits do not depend on its block.
template <typename S, int NB>
void attention_probs(S* rows, Index ld, Index len, Attn attn) {
  using Chunk = Eigen::Array<S, kLane, 1>;
  using ChunkMap = Eigen::Map<Chunk>;
  if (attn == Attn::sigmoid) {
    for (int i = 0; i < NB; ++i)
      for (Index c = 0; c < len; c += kLane) {
        ChunkMap x(rows + i * ld + c);
        x = S(1) / (S(1) + (-x).exp());
      }
    return;
  }
  Chunk m[NB], sum[NB];
  S mx[NB];
  for (int i = 0; i < NB; ++i) m[i] = ChunkMap(rows + i * ld);
  for (Index c = kLane; c < len; c += kLane)
    for (int i = 0; i < NB; ++i) m[i] = m[i].max(ChunkMap(rows + i * ld + c));
  for (int i = 0; i < NB; ++i) {
    mx[i] = register_max(m[i]);
    // softmax1 = exp(s)/(1 + sum exp(s)): the 1 is an extra logit fixed at 0, hence max >= 0.
    if (attn == Attn::softmax1) mx[i] = std::max(mx[i], S(0));
    sum[i].setZero();
  }
  for (Index c = 0; c < len; c += kLane)
    for (int i = 0; i < NB; ++i) {
      ChunkMap x(rows + i * ld + c);
      x = (x - mx[i]).exp();
      sum[i] += x;
    }
  for (int i = 0; i < NB; ++i) {
    S denom = sum[i].sum();
    if (attn == Attn::softmax1) denom += std::exp(-mx[i]);
    const S inv = S(1) / denom;
    for (Index c = 0; c < len; c += kLane) ChunkMap(rows + i * ld + c) *= inv;
  }
}

template <typename S>
void attention_reserve(GemmSpace<S>& ws, Index Pmax, Index D) {
  const Index np = round_up(Pmax, kLane);
  ws.reserve_work(D * np + 2 * kBlock * np);  // a transposed K or V panel, and two blocks of score rows
}
// out (C,N) heads concatenated; att: per sequence H blocks (len,len) row = query, column = key, kept
// for the backward (0 where masked); qkv (3C,N) = [q; k; v] per column.
// Scores s = q.k/sqrt(D); masked keys get -infinity, so every attention function gives them 0.
template <typename S>
void attention_forward(S* out, S* att, const S* qkv, const Sequence* seqs, Index nseq, Index C, Index H, MaskKind mask,
                       Attn attn, GemmSpace<S>& ws) {
  const Index D = C / H, ld = 3 * C;
  const S scale = S(1) / std::sqrt(static_cast<S>(D));
  const S neg_inf = -std::numeric_limits<S>::infinity();
  const bool causal = mask == MaskKind::causal;
  for (Index s = 0; s < nseq; ++s) {
    const Index o = seqs[s].offset, n = seqs[s].len, np = round_up(n, kLane);
    for (Index h = 0; h < H; ++h) {
      const S* q = qkv + o * ld + h * D;            // (D,n) at stride ld
      const S* k = q + C;                           // (D,n)
      const S* v = q + 2 * C;                       // (D,n)
      S* A = att + seqs[s].att_offset + h * n * n;  // (query, key) row-major
      S* kT = ws.work();                            // (D,np)
      S* rows = kT + D * np;                        // (kBlock,np) scores of one query block
      transpose_panel(kT, k, ld, D, n, np);
      for (Index t0 = 0; t0 < n; t0 += kBlock) {
        const int nb = static_cast<int>(std::min<Index>(kBlock, n - t0));
        const Index kend = causal ? t0 + nb : n;  // keys any query of the block sees
        with_block(nb, [&](auto NB) {
          dot_rows<S, decltype(NB)::value>(rows, np, q + t0 * ld, ld, kT, np, D, round_up(kend, kLane), scale);
        });
        const Index kpad = round_up(kend, kLane);  // whole chunks: the -infinity padding gives exactly 0
        for (int i = 0; i < nb; ++i) {
          const Index kmax = causal ? t0 + i + 1 : n;
          std::fill(rows + i * np + kmax, rows + i * np + kpad, neg_inf);
        }
        if (attn == Attn::relu) {
          // relu(s) / (keys the query sees), as Guo et al.: torch divides, so divide
          for (int i = 0; i < nb; ++i) {
            auto x = Eigen::Map<Vec<S>>(rows + i * np, kpad).array();
            x = x.max(S(0)) / static_cast<S>(causal ? t0 + i + 1 : n);
          }
        } else {
          with_block(nb, [&](auto NB) { attention_probs<S, decltype(NB)::value>(rows, np, kpad, attn); });
        }
        for (int i = 0; i < nb; ++i) {
          const Index t = t0 + i, kmax = causal ? t + 1 : n;
          std::copy(rows + i * np, rows + i * np + kmax, A + t * n);
          std::fill(A + t * n + kmax, A + (t + 1) * n, S(0));
        }
        // out_t = sum_j A[t,j] v_j; the block's masked weights are 0
        with_block(nb, [&](auto NB) {
          mix<S, decltype(NB)::value>(out + (o + t0) * C + h * D, C, A + t0 * n, n, 1, v, ld, 0, kend, D, S(1));
        });
      }
    }
  }
}
// out[j*ldo + d] += sum_{i < NB} w[i*ldw + j] * X[i*ldx + d] for j in [0,len), d < D, i in order: the
// rank-NB update that adds a block of queries' terms to every key's accumulator. Each accumulator
// receives its terms in the order mix would add them (i, i.e. the query, ascending), so summing a
// key's column block by block gives the bits of one mix over all queries.
template <typename S, int NB>
void rank_update(S* out, Index ldo, const S* w, Index ldw, const S* X, Index ldx, Index len, Index D) {
  constexpr Index kHalf = kLane / 2;
  auto chunk = [&](auto width_tag, Index db, Index width) {
    constexpr int W = decltype(width_tag)::value;
    using Chunk = Eigen::Array<S, W, 1, Eigen::ColMajor, W == Eigen::Dynamic ? kLane : W, 1>;
    Chunk x[NB];
    for (int i = 0; i < NB; ++i) x[i] = Eigen::Map<const Chunk>(X + i * ldx + db, width);
    for (Index j = 0; j < len; ++j) {
      Eigen::Map<Chunk> acc(out + j * ldo + db, width);
      Chunk a = acc;
      for (int i = 0; i < NB; ++i) a += w[i * ldw + j] * x[i];
      acc = a;
    }
  };
  Index db = 0;
  for (; db + kLane <= D; db += kLane) chunk(std::integral_constant<int, kLane>{}, db, kLane);
  if (db + kHalf <= D) {
    chunk(std::integral_constant<int, kHalf>{}, db, kHalf);
    db += kHalf;
  }
  if (db < D) chunk(std::integral_constant<int, Eigen::Dynamic>{}, db, D - db);
}

// dqkv is assigned (each sequence/head block is written once).
// One pass over each head's query blocks: dA = dy v^T and dS for the block's rows stay in cache, and
// dk, dv gather the block's terms by rank_update instead of a second pass down the columns of the
// (n,n) dS and A, which at long sequences streams them from memory. The order of every sum is the
// column pass's: dk_j and dv_j add their terms over queries t ascending from j's block of kBlock,
// the block's masked weights being exact zeros, and dk is scaled at the end as mix scales.
template <typename S>
void attention_backward(S* dqkv, const S* dout, const S* att, const S* qkv, const Sequence* seqs, Index nseq, Index C,
                        Index H, MaskKind mask, Attn attn, GemmSpace<S>& ws) {
  const Index D = C / H, ld = 3 * C;
  const S scale = S(1) / std::sqrt(static_cast<S>(D));
  const bool causal = mask == MaskKind::causal;
  for (Index s = 0; s < nseq; ++s) {
    const Index o = seqs[s].offset, n = seqs[s].len, np = round_up(n, kLane);
    for (Index h = 0; h < H; ++h) {
      const S* q = qkv + o * ld + h * D;  // (D,n) at stride ld
      const S* k = q + C;
      const S* v = q + 2 * C;
      S* dq = dqkv + o * ld + h * D;  // (D,n) at stride ld
      S* dk = dq + C;
      S* dv = dq + 2 * C;
      const S* dy = dout + o * C + h * D;                 // (D,n) at stride C
      const S* A = att + seqs[s].att_offset + h * n * n;  // (query, key) row-major
      S* vT = ws.work();                                  // (D,np)
      S* rows = vT + D * np;                              // (kBlock,np) dA of one query block
      S* dS = rows + kBlock * np;                         // (kBlock,np) dS of the same block
      transpose_panel(vT, v, ld, D, n, np);
      for (Index j = 0; j < n; ++j) {
        std::fill(dk + j * ld, dk + j * ld + D, S(0));
        std::fill(dv + j * ld, dv + j * ld + D, S(0));
      }
      for (Index t0 = 0; t0 < n; t0 += kBlock) {
        const int nb = static_cast<int>(std::min<Index>(kBlock, n - t0));
        const Index kend = causal ? t0 + nb : n;
        // dA[t,j] = dy_t . v_j
        with_block(nb, [&](auto NB) {
          dot_rows<S, decltype(NB)::value>(rows, np, dy + t0 * C, C, vT, np, D, round_up(kend, kLane), S(1));
        });
        // dA -> dS. softmax and softmax1 share the Jacobian diag(a) - a a^T; sigmoid's is a(1-a); relu's
        // 1/kmax where the score was positive (a > 0). Keys after a query's last are 0 up to kend.
        for (int i = 0; i < nb; ++i) {
          const Index t = t0 + i, kmax = causal ? t + 1 : n;
          const auto a = Eigen::Map<const Vec<S>>(A + t * n, kmax).array();
          const auto d = Eigen::Map<const Vec<S>>(rows + i * np, kmax).array();
          auto ds = Eigen::Map<Vec<S>>(dS + i * np, kmax).array();
          if (attn == Attn::sigmoid)
            ds = d * a * (S(1) - a);
          else if (attn == Attn::relu)
            ds = (a > S(0)).select(d / static_cast<S>(kmax), S(0));
          else
            ds = a * (d - (a * d).sum());
          std::fill(dS + i * np + kmax, dS + i * np + kend, S(0));
        }
        with_block(nb, [&](auto NB) {
          constexpr int R = decltype(NB)::value;
          // dq_t = scale sum_j dS[t,j] k_j
          mix<S, R>(dq + t0 * ld, ld, dS, np, 1, k, ld, 0, kend, D, scale);
          // dk_j += dS[t,j] q_t and dv_j += A[t,j] dy_t for this block's queries t (A is 0 above the diagonal)
          rank_update<S, R>(dk, ld, dS, np, q + t0 * ld, ld, kend, D);
          rank_update<S, R>(dv, ld, A + t0 * n, n, dy + t0 * C, C, kend, D);
        });
      }
      for (Index j = 0; j < n; ++j) Eigen::Map<Vec<S>>(dk + j * ld, D) *= scale;
    }
  }
}

}  // namespace p0sim::sim::layers
