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
  S* a() { return a_.data(); }
  S* b() { return b_.data(); }
  Index cap_a() const { return a_.size(); }
  Index cap_b() const { return b_.size(); }

 private:
  Vec<S> a_, b_;  // aligned to Eigen's packet size, as the kernel's packed loads require
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
template <typename S>
void attention_reserve(GemmSpace<S>& ws, Index Pmax, Index D) {
  ws.reserve(Pmax, Pmax, D);
  ws.reserve(D, Pmax, Pmax);
}
// out (C,N) heads concatenated; att: per sequence H blocks (len,len) row = query, column = key, kept
// for the backward (0 where masked); qkv (3C,N) = [q; k; v] per column.
// Scores s = q.k/sqrt(D); masked keys get -infinity, so every attention function gives them 0.
template <typename S>
void attention_forward(S* out, S* att, const S* qkv, const Sequence* seqs, Index nseq, Index C, Index H,
                       MaskKind mask, AttnKind attn, GemmSpace<S>& ws) {
  const Index D = C / H;
  const S scale = S(1) / std::sqrt(static_cast<S>(D));
  const S neg_inf = -std::numeric_limits<S>::infinity();
  for (Index s = 0; s < nseq; ++s) {
    const Index o = seqs[s].offset, n = seqs[s].len;
    for (Index h = 0; h < H; ++h) {
      CStrided<S> q(qkv + o * 3 * C + h * D, D, n, Eigen::OuterStride<>(3 * C));          // (D,n)
      CStrided<S> k(qkv + o * 3 * C + C + h * D, D, n, Eigen::OuterStride<>(3 * C));      // (D,n)
      CStrided<S> v(qkv + o * 3 * C + 2 * C + h * D, D, n, Eigen::OuterStride<>(3 * C));  // (D,n)
      Cols<S> A(att + seqs[s].att_offset + h * n * n, n, n);  // (key, query): column = query row
      gemm<S, true, false>(n, n, D, scale, k.data(), 3 * C, q.data(), 3 * C, false, A.data(), n, ws);  // k^T q
      for (Index t = 0; t < n; ++t) {
        auto col = A.col(t);
        const Index kmax = mask == MaskKind::causal ? t + 1 : n;
        col.tail(n - kmax).setConstant(neg_inf);
        auto live = col.head(kmax).array();
        if (attn == AttnKind::sigmoid) {
          live = S(1) / (S(1) + (-live).exp());
        } else {
          // softmax1 = exp(s)/(1 + sum exp(s)): the 1 is an extra logit fixed at 0, hence max >= 0.
          S m = live.maxCoeff();
          if (attn == AttnKind::softmax1) m = std::max(m, S(0));
          live = (live - m).exp();
          S denom = live.sum();
          if (attn == AttnKind::softmax1) denom += std::exp(-m);
          live *= S(1) / denom;
        }
        col.tail(n - kmax).setZero();
      }
      gemm<S, false, false>(D, n, n, S(1), v.data(), 3 * C, A.data(), n, false, out + o * C + h * D, C, ws);  // (D,n) = v A
    }
  }
}
// dqkv is assigned (each sequence/head block is written once); scratch holds (Pmax,Pmax).
template <typename S>
void attention_backward(S* dqkv, S* scratch, const S* dout, const S* att, const S* qkv, const Sequence* seqs,
                        Index nseq, Index C, Index H, MaskKind mask, AttnKind attn, GemmSpace<S>& ws) {
  const Index D = C / H;
  const S scale = S(1) / std::sqrt(static_cast<S>(D));
  for (Index s = 0; s < nseq; ++s) {
    const Index o = seqs[s].offset, n = seqs[s].len;
    for (Index h = 0; h < H; ++h) {
      CStrided<S> q(qkv + o * 3 * C + h * D, D, n, Eigen::OuterStride<>(3 * C));
      CStrided<S> k(qkv + o * 3 * C + C + h * D, D, n, Eigen::OuterStride<>(3 * C));
      CStrided<S> v(qkv + o * 3 * C + 2 * C + h * D, D, n, Eigen::OuterStride<>(3 * C));
      Strided<S> dq(dqkv + o * 3 * C + h * D, D, n, Eigen::OuterStride<>(3 * C));
      Strided<S> dk(dqkv + o * 3 * C + C + h * D, D, n, Eigen::OuterStride<>(3 * C));
      Strided<S> dv(dqkv + o * 3 * C + 2 * C + h * D, D, n, Eigen::OuterStride<>(3 * C));
      CCols<S> A(att + seqs[s].att_offset + h * n * n, n, n);  // (key, query)
      CStrided<S> dy(dout + o * C + h * D, D, n, Eigen::OuterStride<>(C));
      Cols<S> dA(scratch, n, n);
      gemm<S, true, false>(n, n, D, S(1), v.data(), 3 * C, dy.data(), C, false, dA.data(), n, ws);  // (key,query) = v^T dy
      gemm<S, false, true>(D, n, n, S(1), dy.data(), C, A.data(), n, false, dv.data(), 3 * C, ws);  // (D,key) = dy A^T
      // dA -> dS in place. softmax and softmax1 share the Jacobian diag(a) - a a^T; sigmoid's is
      // a(1-a). Masked entries have a = 0, so their dS is 0.
      for (Index t = 0; t < n; ++t) {
        const Index kmax = mask == MaskKind::causal ? t + 1 : n;
        auto a = A.col(t).head(kmax).array();
        auto d = dA.col(t).head(kmax).array();
        if (attn == AttnKind::sigmoid) {
          d = d * a * (S(1) - a);
        } else {
          const S dot = (a * d).sum();
          d = a * (d - dot);
        }
        dA.col(t).tail(n - kmax).setZero();
      }
      gemm<S, false, false>(D, n, n, scale, k.data(), 3 * C, dA.data(), n, false, dq.data(), 3 * C, ws);  // (D,query) = k dS
      gemm<S, false, true>(D, n, n, scale, q.data(), 3 * C, dA.data(), n, false, dk.data(), 3 * C, ws);   // (D,key) = q dS^T
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
template <typename S>
void crossentropy_backward(S* dlogits, const S* probs, const std::int32_t* targets, Index N, Index V, S scale) {
  CCols<S> p(probs, V, N);
  Cols<S> dz(dlogits, V, N);
  for (Index n = 0; n < N; ++n) {
    if (targets[n] < 0) continue;
    dz.col(n) += scale * p.col(n);
    dz(targets[n], n) -= scale;
  }
}

}  // namespace p0sim::sim::layers
