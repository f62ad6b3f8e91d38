#pragma once
// The layer kernels of the tiny transformer, each forward next to its backward (llm.c style).
// Legend: N token columns in the batch (B*P, or the packed prefixes of prefix-bidirectional),
// C d_model, H heads, D = C/H, F d_ff, V vocab (rows of the embedding table), P positions.
// Layout: a row-major (N,C) activation buffer is the column-major C x N matrix `Cols`, one token
// per column; a row-major (out,in) weight is the column-major in x out matrix W^T, so a linear
// layer y = x W^T is `out.noalias() = Wt.transpose() * in` and Eigen's GEMM sees contiguous panels.
// Argument order: outputs, caches kept for backward, inputs, weights, sizes.
// Forward assigns its outputs; backward accumulates into parameter gradients and into dinp.
// Nothing here allocates: every buffer is passed in.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

namespace p0sim::sim::layers {

using Eigen::Index;
template <typename S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;  // column-major
template <typename S>
using Cols = Eigen::Map<Mat<S>>;
template <typename S>
using CCols = Eigen::Map<const Mat<S>>;
template <typename S>
using Strided = Eigen::Map<Mat<S>, 0, Eigen::OuterStride<>>;
template <typename S>
using CStrided = Eigen::Map<const Mat<S>, 0, Eigen::OuterStride<>>;
template <typename S>
using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;

// One attention sequence inside the batch: columns offset..offset+len-1 hold positions 0..len-1;
// its probabilities sit at att_offset: H blocks of (len,len), row = query, column = key.
struct Sequence {
  Index offset = 0;
  Index len = 0;
  Index att_offset = 0;
};

enum class MaskKind { causal, full };       // key <= query, or every key of the sequence
enum class AttnKind { softmax, softmax1, sigmoid };
enum class NormKind { rms, layer };
enum class ActKind { gelu, relu };

inline constexpr double norm_eps = 1e-5;

// ---- embedding: x = tok_emb[token] (+ pos_emb[position]) ----------------------------------------
// (C,N) <- tok_emb (V,C), pos_emb (P,C) or nullptr
template <typename S>
void encoder_forward(S* out, const std::int32_t* tokens, const std::int32_t* positions, const S* tok_emb,
                     const S* pos_emb, Index N, Index C) {
  Cols<S> x(out, C, N);
  for (Index n = 0; n < N; ++n) {
    auto col = x.col(n);
    col = Eigen::Map<const Vec<S>>(tok_emb + tokens[n] * C, C);
    if (pos_emb) col += Eigen::Map<const Vec<S>>(pos_emb + positions[n] * C, C);
  }
}
template <typename S>
void encoder_backward(S* dtok_emb, S* dpos_emb, const S* dout, const std::int32_t* tokens,
                      const std::int32_t* positions, Index N, Index C) {
  CCols<S> dx(dout, C, N);
  for (Index n = 0; n < N; ++n) {
    Eigen::Map<Vec<S>>(dtok_emb + tokens[n] * C, C) += dx.col(n);
    if (dpos_emb) Eigen::Map<Vec<S>>(dpos_emb + positions[n] * C, C) += dx.col(n);
  }
}

// ---- RMSNorm / LayerNorm over C, eps 1e-5 ---------------------------------------------------------
// (C,N) -> (C,N); caches mean (N) (LayerNorm only) and rstd (N) for the backward.
template <typename S>
void norm_forward(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias, Index N, Index C,
                  NormKind kind) {
  CCols<S> x(inp, C, N);
  Cols<S> y(out, C, N);
  Eigen::Map<const Vec<S>> g(weight, C);
  const S eps = static_cast<S>(norm_eps);
  for (Index n = 0; n < N; ++n) {
    auto xc = x.col(n);
    if (kind == NormKind::rms) {
      const S r = S(1) / std::sqrt(xc.squaredNorm() / static_cast<S>(C) + eps);
      rstd[n] = r;
      y.col(n) = (xc * r).cwiseProduct(g);
    } else {
      const S m = xc.mean();
      const S var = (xc.array() - m).square().sum() / static_cast<S>(C);
      const S r = S(1) / std::sqrt(var + eps);
      mean[n] = m;
      rstd[n] = r;
      y.col(n) = ((xc.array() - m) * r * g.array() + Eigen::Map<const Vec<S>>(bias, C).array()).matrix();
    }
  }
}
template <typename S>
void norm_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* mean, const S* rstd,
                   const S* weight, Index N, Index C, NormKind kind) {
  CCols<S> x(inp, C, N), dy(dout, C, N);
  Cols<S> dx(dinp, C, N);
  Eigen::Map<const Vec<S>> g(weight, C);
  Eigen::Map<Vec<S>> dg(dweight, C);
  const S invC = S(1) / static_cast<S>(C);
  for (Index n = 0; n < N; ++n) {
    const S r = rstd[n];
    const S m = kind == NormKind::rms ? S(0) : mean[n];
    // xhat = (x - m) r; y = xhat g (+ b). dxhat = dy g;
    // rms: dx = r (dxhat - xhat mean(dxhat xhat)); layer: also minus mean(dxhat).
    const auto xhat = (x.col(n).array() - m) * r;
    const auto dxhat = dy.col(n).array() * g.array();
    const S proj = (dxhat * xhat).sum() * invC;
    const S shift = kind == NormKind::rms ? S(0) : dxhat.sum() * invC;
    dx.col(n).array() += r * (dxhat - shift - xhat * proj);
    dg.array() += dy.col(n).array() * xhat;
    if (kind == NormKind::layer) Eigen::Map<Vec<S>>(dbias, C) += dy.col(n);
  }
}

// ---- GEMM on pre-sized packing space --------------------------------------------------------------
// Eigen's GEMM packs its operands into blocks it allocates on the heap once they pass 128 KiB, which
// a training step must not do. Calling its kernel with our own blocking object keeps the packing
// space in one buffer sized when the model is built (reserve), and skips the expression layer for
// the many small per-head products.
template <typename S>
class GemmSpace {
 public:
  // Grows the packing space to fit an m x n x k product (setup time only: this allocates).
  void reserve(Index m, Index n, Index k) {
    Index kc = k, mc = m, nc = n;
    Eigen::internal::computeProductBlockingSizes<S, S, 1, Index>(kc, mc, nc, 1);
    if (kc * mc > a_.size()) a_.resize(kc * mc);
    if (kc * nc > b_.size()) b_.resize(kc * nc);
  }
  // Work space of the fused kernels (attention panels), grown like the packing space.
  void reserve_work(Index n) {
    if (n > work_.size()) work_.resize(n);
  }
  S* work() { return work_.data(); }
  S* a() { return a_.data(); }
  S* b() { return b_.data(); }
  Index cap_a() const { return a_.size(); }
  Index cap_b() const { return b_.size(); }

 private:
  Vec<S> a_, b_;  // aligned to Eigen's packet size, as the kernel's packed loads require
  Vec<S> work_;
};

template <typename S>
struct PresizedBlocking : Eigen::internal::level3_blocking<S, S> {
  PresizedBlocking(Index m, Index n, Index k, GemmSpace<S>& ws) {
    Index kc = k, mc = m, nc = n;
    Eigen::internal::computeProductBlockingSizes<S, S, 1, Index>(kc, mc, nc, 1);
    // A shape that was not reserved still runs correctly, in smaller blocks.
    kc = std::max<Index>(1, std::min({kc, ws.cap_a(), ws.cap_b()}));
    if (kc * mc > ws.cap_a()) mc = std::max<Index>(1, ws.cap_a() / kc);
    if (kc * nc > ws.cap_b()) nc = std::max<Index>(1, ws.cap_b() / kc);
    this->m_kc = kc;
    this->m_mc = mc;
    this->m_nc = nc;
    this->m_blockA = ws.a();
    this->m_blockB = ws.b();
  }
};

// C (m,n) col-major with leading dimension ldc: C = [C +] alpha op(A) op(B).
// TA: A is stored (k,m) col-major and used transposed; else stored (m,k). TB likewise, (n,k) or (k,n).
template <typename S, bool TA, bool TB>
void gemm(Index m, Index n, Index k, S alpha, const S* A, Index lda, const S* B, Index ldb, bool accumulate, S* C,
          Index ldc, GemmSpace<S>& ws) {
  if (!accumulate) Strided<S>(C, m, n, Eigen::OuterStride<>(ldc)).setZero();
  if (m == 0 || n == 0 || k == 0) return;
  PresizedBlocking<S> blocking(m, n, k, ws);
  Eigen::internal::general_matrix_matrix_product<Index, S, TA ? Eigen::RowMajor : Eigen::ColMajor, false, S,
                                                 TB ? Eigen::RowMajor : Eigen::ColMajor, false, Eigen::ColMajor,
                                                 1>::run(m, n, k, A, lda, B, ldb, C, 1, ldc, alpha, blocking);
}

// ---- linear y = x W^T, W stored (O,I) row-major ----------------------------------------------------
template <typename S>
void matmul_reserve(GemmSpace<S>& ws, Index N, Index I, Index O) {
  ws.reserve(O, N, I);
  ws.reserve(I, O, N);
  ws.reserve(I, N, O);
}
// (O,N) <- (I,N); accumulate=true adds to out (a residual connection fused into the GEMM).
template <typename S>
void matmul_forward(S* out, const S* inp, const S* weight, Index N, Index I, Index O, bool accumulate,
                    GemmSpace<S>& ws) {
  gemm<S, true, false>(O, N, I, S(1), weight, I, inp, I, accumulate, out, O, ws);  // (O,N) = W (O,I) x (I,N)
}
template <typename S>
void matmul_backward(S* dinp, S* dweight, const S* dout, const S* inp, const S* weight, Index N, Index I, Index O,
                     GemmSpace<S>& ws) {
  gemm<S, false, true>(I, O, N, S(1), inp, I, dout, O, true, dweight, I, ws);  // dW^T (I,O) += x (I,N) dy^T (N,O)
  if (dinp) gemm<S, false, false>(I, N, O, S(1), weight, I, dout, O, true, dinp, I, ws);  // (I,N) += W^T dy
}

// ---- RoPE on q and k (GPT-NeoX layout: pairs (i, i+D/2) rotated by t * 10000^(-2i/D)) ----------
// qkv (3C,N) in place; table: cos/sin (Pmax, D/2) row-major.
template <typename S>
void rope_table(S* cos_t, S* sin_t, Index Pmax, Index D) {
  const Index half = D / 2;
  for (Index t = 0; t < Pmax; ++t)
    for (Index i = 0; i < half; ++i) {
      const double freq = std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(D));
      const double angle = static_cast<double>(t) * freq;
      cos_t[t * half + i] = static_cast<S>(std::cos(angle));
      sin_t[t * half + i] = static_cast<S>(std::sin(angle));
    }
}
// sign = +1 rotates by the angle (forward), -1 by its negative (backward: R^T = R(-angle)).
template <typename S>
void rope_rotate(S* qkv, const std::int32_t* positions, const S* cos_t, const S* sin_t, Index N, Index C, Index H,
                 S sign) {
  const Index D = C / H, half = D / 2;
  for (Index n = 0; n < N; ++n) {
    const S* cs = cos_t + positions[n] * half;
    const S* sn = sin_t + positions[n] * half;
    for (Index part = 0; part < 2; ++part)  // q, then k
      for (Index h = 0; h < H; ++h) {
        S* v = qkv + n * 3 * C + part * C + h * D;
        for (Index i = 0; i < half; ++i) {
          const S a = v[i], b = v[i + half], c = cs[i], s = sign * sn[i];
          v[i] = a * c - b * s;
          v[i + half] = a * s + b * c;
        }
      }
  }
}
template <typename S>
void rope_forward(S* qkv, const std::int32_t* positions, const S* cos_t, const S* sin_t, Index N, Index C,
                  Index H) {
  rope_rotate(qkv, positions, cos_t, sin_t, N, C, H, S(1));
}
// dqkv in place: the gradient w.r.t. the rotated q,k becomes the gradient w.r.t. the unrotated ones.
template <typename S>
void rope_backward(S* dqkv, const std::int32_t* positions, const S* cos_t, const S* sin_t, Index N, Index C,
                   Index H) {
  rope_rotate(dqkv, positions, cos_t, sin_t, N, C, H, S(-1));
}

// ---- scaled dot-product attention per sequence and head -------------------------------------------
// Fused kernels for the short sequences p0sim trains on (P up to a few hundred, D = C/H small):
// per (sequence, head) the scores, mask, softmax and A.v of a block of queries are computed from
// L1-resident panels, with no per-product call overhead and no packing, and under the causal mask
// only the keys up to the block's last query are visited. Two register-blocked kernels do all the
// arithmetic: dot_rows (a block of rows dotted with every column of a transposed panel, vectorised
// over the columns) and mix (a block of weighted sums of D-vectors, vectorised over D).
inline constexpr Index kLane = 16;   // columns per vector chunk (one AVX-512 register of float)
inline constexpr int kBlock = 4;     // queries (or keys) per register block
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
void mix_chunk(S* out, Index ldo, const S* w, Index wi, Index wj, const S* Y, Index ldy, Index lo, Index hi,
               Index db, Index width, S alpha) {
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
    case 4: kernel(std::integral_constant<int, 4>{}); break;
    case 3: kernel(std::integral_constant<int, 3>{}); break;
    case 2: kernel(std::integral_constant<int, 2>{}); break;
    default: kernel(std::integral_constant<int, 1>{}); break;
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

// Attention probabilities in place over len (a multiple of kLane) scores, masked ones -infinity,
// one register chunk at a time.
template <typename S>
void attention_probs(S* row, Index len, AttnKind attn) {
  using Chunk = Eigen::Array<S, kLane, 1>;
  using ChunkMap = Eigen::Map<Chunk>;
  if (attn == AttnKind::sigmoid) {
    for (Index c = 0; c < len; c += kLane) {
      ChunkMap x(row + c);
      x = S(1) / (S(1) + (-x).exp());
    }
    return;
  }
  Chunk m = ChunkMap(row);
  for (Index c = kLane; c < len; c += kLane) m = m.max(ChunkMap(row + c));
  // The row maximum reduced in registers where one packet holds the chunk (maxCoeff goes through
  // memory); a maximum is exact, so either way gives the same bits.
  S mx;
  using Packet = typename Eigen::internal::packet_traits<S>::type;
  if constexpr (Eigen::internal::packet_traits<S>::size == kLane)
    mx = Eigen::internal::predux_max(Eigen::internal::ploadu<Packet>(m.data()));
  else
    mx = m.maxCoeff();
  // softmax1 = exp(s)/(1 + sum exp(s)): the 1 is an extra logit fixed at 0, hence max >= 0.
  if (attn == AttnKind::softmax1) mx = std::max(mx, S(0));
  Chunk sum = Chunk::Zero();
  for (Index c = 0; c < len; c += kLane) {
    ChunkMap x(row + c);
    x = (x - mx).exp();
    sum += x;
  }
  S denom = sum.sum();
  if (attn == AttnKind::softmax1) denom += std::exp(-mx);
  const S inv = S(1) / denom;
  for (Index c = 0; c < len; c += kLane) ChunkMap(row + c) *= inv;
}

template <typename S>
void attention_reserve(GemmSpace<S>& ws, Index Pmax, Index D) {
  const Index np = round_up(Pmax, kLane);
  ws.reserve_work(D * np + kBlock * np);  // a transposed K or V panel, and a block of score rows
}
// out (C,N) heads concatenated; att: per sequence H blocks (len,len) row = query, column = key, kept
// for the backward (0 where masked); qkv (3C,N) = [q; k; v] per column.
// Scores s = q.k/sqrt(D); masked keys get -infinity, so every attention function gives them 0.
template <typename S>
void attention_forward(S* out, S* att, const S* qkv, const Sequence* seqs, Index nseq, Index C, Index H,
                       MaskKind mask, AttnKind attn, GemmSpace<S>& ws) {
  const Index D = C / H, ld = 3 * C;
  const S scale = S(1) / std::sqrt(static_cast<S>(D));
  const S neg_inf = -std::numeric_limits<S>::infinity();
  const bool causal = mask == MaskKind::causal;
  for (Index s = 0; s < nseq; ++s) {
    const Index o = seqs[s].offset, n = seqs[s].len, np = round_up(n, kLane);
    for (Index h = 0; h < H; ++h) {
      const S* q = qkv + o * ld + h * D;      // (D,n) at stride ld
      const S* k = q + C;                     // (D,n)
      const S* v = q + 2 * C;                 // (D,n)
      S* A = att + seqs[s].att_offset + h * n * n;  // (query, key) row-major
      S* kT = ws.work();                      // (D,np)
      S* rows = kT + D * np;                  // (kBlock,np) scores of one query block
      transpose_panel(kT, k, ld, D, n, np);
      for (Index t0 = 0; t0 < n; t0 += kBlock) {
        const int nb = static_cast<int>(std::min<Index>(kBlock, n - t0));
        const Index kend = causal ? t0 + nb : n;  // keys any query of the block sees
        with_block(nb, [&](auto NB) {
          dot_rows<S, decltype(NB)::value>(rows, np, q + t0 * ld, ld, kT, np, D, round_up(kend, kLane), scale);
        });
        for (int i = 0; i < nb; ++i) {
          const Index t = t0 + i, kmax = causal ? t + 1 : n, kpad = round_up(kmax, kLane);
          Eigen::Map<Vec<S>> row(rows + i * np, kpad);
          row.tail(kpad - kmax).setConstant(neg_inf);
          attention_probs(row.data(), kpad, attn);  // whole chunks: the -infinity padding gives exactly 0
          std::copy(row.data(), row.data() + kmax, A + t * n);
          std::fill(A + t * n + kmax, A + (t + 1) * n, S(0));
        }
        // out_t = sum_j A[t,j] v_j; the block's masked weights are 0
        with_block(nb, [&](auto NB) { mix<S, decltype(NB)::value>(out + (o + t0) * C + h * D, C, A + t0 * n, n, 1, v, ld, 0, kend, D, S(1)); });
      }
    }
  }
}
// dqkv is assigned (each sequence/head block is written once); scratch holds (Pmax,Pmax): dS.
template <typename S>
void attention_backward(S* dqkv, S* scratch, const S* dout, const S* att, const S* qkv, const Sequence* seqs,
                        Index nseq, Index C, Index H, MaskKind mask, AttnKind attn, GemmSpace<S>& ws) {
  const Index D = C / H, ld = 3 * C;
  const S scale = S(1) / std::sqrt(static_cast<S>(D));
  const bool causal = mask == MaskKind::causal;
  for (Index s = 0; s < nseq; ++s) {
    const Index o = seqs[s].offset, n = seqs[s].len, np = round_up(n, kLane);
    for (Index h = 0; h < H; ++h) {
      const S* q = qkv + o * ld + h * D;  // (D,n) at stride ld
      const S* k = q + C;
      const S* v = q + 2 * C;
      S* dq = dqkv + o * ld + h * D;      // (D,n) at stride ld
      S* dk = dq + C;
      S* dv = dq + 2 * C;
      const S* dy = dout + o * C + h * D;  // (D,n) at stride C
      const S* A = att + seqs[s].att_offset + h * n * n;  // (query, key) row-major
      S* dS = scratch;                     // (query, key) row-major, (n,n)
      S* vT = ws.work();                   // (D,np)
      S* rows = vT + D * np;               // (kBlock,np) dA of one query block
      transpose_panel(vT, v, ld, D, n, np);
      for (Index t0 = 0; t0 < n; t0 += kBlock) {
        const int nb = static_cast<int>(std::min<Index>(kBlock, n - t0));
        const Index kend = causal ? t0 + nb : n;
        // dA[t,j] = dy_t . v_j
        with_block(nb, [&](auto NB) { dot_rows<S, decltype(NB)::value>(rows, np, dy + t0 * C, C, vT, np, D, round_up(kend, kLane), S(1)); });
        // dA -> dS. softmax and softmax1 share the Jacobian diag(a) - a a^T; sigmoid's is a(1-a).
        for (int i = 0; i < nb; ++i) {
          const Index t = t0 + i, kmax = causal ? t + 1 : n;
          const auto a = Eigen::Map<const Vec<S>>(A + t * n, kmax).array();
          const auto d = Eigen::Map<const Vec<S>>(rows + i * np, kmax).array();
          auto ds = Eigen::Map<Vec<S>>(dS + t * n, kmax).array();
          if (attn == AttnKind::sigmoid)
            ds = d * a * (S(1) - a);
          else
            ds = a * (d - (a * d).sum());
          std::fill(dS + t * n + kmax, dS + (t + 1) * n, S(0));
        }
        // dq_t = scale sum_j dS[t,j] k_j
        with_block(nb, [&](auto NB) { mix<S, decltype(NB)::value>(dq + t0 * ld, ld, dS + t0 * n, n, 1, k, ld, 0, kend, D, scale); });
      }
      // dk_j = scale sum_t dS[t,j] q_t and dv_j = sum_t A[t,j] dy_t, over queries t >= j under the mask
      for (Index j0 = 0; j0 < n; j0 += kBlock) {
        const int nb = static_cast<int>(std::min<Index>(kBlock, n - j0));
        const Index tbeg = causal ? j0 : 0;
        with_block(nb, [&](auto NB) {
          mix<S, decltype(NB)::value>(dk + j0 * ld, ld, dS + j0, 1, n, q, ld, tbeg, n, D, scale);
          mix<S, decltype(NB)::value>(dv + j0 * ld, ld, A + j0, 1, n, dy, C, tbeg, n, D, S(1));
        });
      }
    }
  }
}

// ---- MLP activation: gelu (tanh approximation) or relu ---------------------------------------------
// (F,N) -> (F,N), elementwise over a flat buffer of M = F*N values.
template <typename S>
void act_forward(S* out, const S* inp, Index M, ActKind kind) {
  Eigen::Map<const Vec<S>> x(inp, M);
  Eigen::Map<Vec<S>> y(out, M);
  if (kind == ActKind::relu) {
    y = x.cwiseMax(S(0));
  } else {
    const S k = static_cast<S>(std::sqrt(2.0 / std::numbers::pi));
    const S c = static_cast<S>(0.044715);
    y.array() = S(0.5) * x.array() * (S(1) + (k * (x.array() + c * x.array().cube())).tanh());
  }
}
// In place: d holds dL/d(act output) on entry and dL/d(act input) on return.
template <typename S>
void act_backward_inplace(S* d, const S* inp, Index M, ActKind kind) {
  Eigen::Map<const Vec<S>> x(inp, M);
  Eigen::Map<Vec<S>> g(d, M);
  if (kind == ActKind::relu) {
    g.array() = (x.array() > S(0)).select(g.array(), S(0));
  } else {
    const S k = static_cast<S>(std::sqrt(2.0 / std::numbers::pi));
    const S c = static_cast<S>(0.044715);
    const auto xa = x.array();
    const auto th = (k * (xa + c * xa.cube())).tanh();
    g.array() *= S(0.5) * (S(1) + th) + S(0.5) * xa * (S(1) - th.square()) * k * (S(1) + S(3) * c * xa.square());
  }
}

// The model's pair: the forward also keeps the activation's local derivative, so the backward is one
// multiply instead of a second tanh. dact may alias inp (the model overwrites the pre-activation,
// which nothing else reads): each chunk is read before it is written.
template <typename S>
void act_forward(S* out, S* dact, const S* inp, Index M, ActKind kind) {
  const S k = static_cast<S>(std::sqrt(2.0 / std::numbers::pi));
  const S c = static_cast<S>(0.044715);
  auto chunk = [&](auto x, auto y, auto g) {  // x: a copy of the inputs; y, g: output maps
    if (kind == ActKind::relu) {
      g = (x > S(0)).select(decltype(x)::Ones(), decltype(x)::Zero());
      y = x * g;
    } else {
      const decltype(x) th = (k * (x + c * x.cube())).tanh();
      y = S(0.5) * x * (S(1) + th);
      g = S(0.5) * (S(1) + th) + S(0.5) * x * (S(1) - th.square()) * k * (S(1) + S(3) * c * x.square());
    }
  };
  using Chunk = Eigen::Array<S, kLane, 1>;
  using Part = Eigen::Array<S, Eigen::Dynamic, 1>;
  Index i = 0;
  for (; i + kLane <= M; i += kLane)
    chunk(Chunk(Eigen::Map<const Chunk>(inp + i)), Eigen::Map<Chunk>(out + i), Eigen::Map<Chunk>(dact + i));
  if (i < M) {
    const Index r = M - i;
    Chunk x;
    x.head(r) = Eigen::Map<const Part>(inp + i, r);
    x.tail(kLane - r).setZero();
    Chunk y, g;
    chunk(x, Eigen::Map<Chunk>(y.data()), Eigen::Map<Chunk>(g.data()));
    Eigen::Map<Part>(out + i, r) = y.head(r);
    Eigen::Map<Part>(dact + i, r) = g.head(r);
  }
}
// In place: d holds dL/d(act output) on entry and dL/d(act input) on return; dact from the forward.
template <typename S>
void act_backward_cached(S* d, const S* dact, Index M) {
  Eigen::Map<Vec<S>>(d, M).array() *= Eigen::Map<const Vec<S>>(dact, M).array();
}

// ---- cross-entropy -------------------------------------------------------------------------------
// probs (V,N) softmax of logits (V,N); returns the sum over columns with target >= 0 of -log p[target].
template <typename S>
double crossentropy_forward(S* probs, const S* logits, const std::int32_t* targets, Index N, Index V) {
  CCols<S> z(logits, V, N);
  Cols<S> p(probs, V, N);
  double total = 0;
  for (Index n = 0; n < N; ++n) {
    const S m = z.col(n).maxCoeff();
    p.col(n).array() = (z.col(n).array() - m).exp();
    const S sum = p.col(n).sum();
    p.col(n) *= S(1) / sum;
    if (targets[n] >= 0)
      total += static_cast<double>(m - z(targets[n], n)) + std::log(static_cast<double>(sum));
  }
  return total;
}
// dlogits (V,N) accumulates scale * (p - onehot) on columns with a target; scale = 1/(number of
// predictions) is the only place the mean's denominator appears.
// accumulate = false assigns instead (unscored columns get 0), sparing a separate zeroing pass.
template <typename S>
void crossentropy_backward(S* dlogits, const S* probs, const std::int32_t* targets, Index N, Index V, S scale,
                           bool accumulate = true) {
  CCols<S> p(probs, V, N);
  Cols<S> dz(dlogits, V, N);
  for (Index n = 0; n < N; ++n) {
    if (targets[n] < 0) {
      if (!accumulate) dz.col(n).setZero();
      continue;
    }
    if (accumulate)
      dz.col(n) += scale * p.col(n);
    else
      dz.col(n) = scale * p.col(n);
    dz(targets[n], n) -= scale;
  }
}

}  // namespace p0sim::sim::layers
