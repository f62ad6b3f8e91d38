#pragma once
// Named views over the model's flat buffers (llm.c's ParameterTensors and ActivationTensors), built
// once when the model is built, so the forward and the backward name what they read.
// Legend as sim/model.cpp: N token columns (B*P, or B*P(P+1)/2 with prefix-bidirectional), Nmax the
// columns of max_batch rows, E embedding rows. Weights are viewed as their column-major transposes:
// a row-major (out,in) tensor is an (in,out) `Matrix` (sim/layers/tensor.hpp), so its rows are the
// layer's inputs. Activation views span Nmax columns; a forward fills the first N.
#include <string>
#include <vector>

#include "sim/layers/tensor.hpp"
#include "sim/model.hpp"

namespace p0sim::sim {

// One struct for parameters and for gradients: they share parameter_layout, over two buffers.
template <typename S>
struct ParamViews {
  using Matrix = layers::Cols<S>;
  using Vector = Eigen::Map<layers::Vec<S>>;
  struct Norm {
    Vector weight;  // (C)
    Vector bias;    // (C) with norm=layer, else empty (data() is nullptr)
  };
  struct Attention {
    Matrix wqkv;            // (3C,C): wq, wk, wv are adjacent, so q,k,v come from one GEMM
    Matrix wq, wk, wv, wo;  // (C,C)
  };
  struct Mlp {
    Matrix w1;  // (F,C)
    Matrix w2;  // (C,F)
  };
  struct Block {
    Norm norm1;
    Attention attn;
    Norm norm2;
    Mlp mlp;
  };

  Matrix tok_emb;             // (E,C)
  Matrix pos_emb;             // (P,C) with pos=absolute, else empty
  std::vector<Block> blocks;  // L
  Norm norm_f;
  Matrix lm_head;  // (V,C)

  ParamViews(S* base, const std::vector<TensorInfo>& layout, int layers)
      : tok_emb(matrix(base, layout, "tok_emb")),
        pos_emb(matrix(base, layout, "pos_emb")),
        norm_f(norm(base, layout, "norm_f")),
        lm_head(matrix(base, layout, "lm_head")) {
    blocks.reserve(static_cast<std::size_t>(layers));
    for (int l = 0; l < layers; ++l) {
      const std::string b = "blocks." + std::to_string(l) + ".";
      Matrix wq = matrix(base, layout, b + "attn.wq");
      blocks.push_back({norm(base, layout, b + "norm1"),
                        {Matrix(wq.data(), wq.rows(), 3 * wq.cols()), wq, matrix(base, layout, b + "attn.wk"),
                         matrix(base, layout, b + "attn.wv"), matrix(base, layout, b + "attn.wo")},
                        norm(base, layout, b + "norm2"),
                        {matrix(base, layout, b + "mlp.w1"), matrix(base, layout, b + "mlp.w2")}});
    }
  }

 private:
  static const TensorInfo* find(const std::vector<TensorInfo>& layout, const std::string& name) {
    for (const auto& t : layout)
      if (t.name == name) return &t;
    return nullptr;
  }
  static Matrix matrix(S* base, const std::vector<TensorInfo>& layout, const std::string& name) {
    const TensorInfo* t = find(layout, name);
    return t ? Matrix(base + t->offset, t->shape[1], t->shape[0]) : Matrix(nullptr, 0, 0);
  }
  static Vector vector(S* base, const std::vector<TensorInfo>& layout, const std::string& name) {
    const TensorInfo* t = find(layout, name);
    return t ? Vector(base + t->offset, t->size) : Vector(nullptr, 0);
  }
  static Norm norm(S* base, const std::vector<TensorInfo>& layout, const std::string& name) {
    return {vector(base, layout, name + ".weight"), vector(base, layout, name + ".bias")};
  }
};

// The activations of one forward, what the backward reads, and the backward's own scratch.
// Members are declared in buffer order: each takes the next stretch of the buffer.
template <typename S>
class ActivationViews {
  using Index = Eigen::Index;
  // Hands out consecutive stretches of the buffer; with no buffer it only counts (sizing pass).
  struct Arena {
    S* base;
    Index used = 0;
    S* take(Index n) {
      S* at = base ? base + used : nullptr;
      used += n;
      return at;
    }
  };
  Arena arena_;

 public:
  using Matrix = layers::Cols<S>;
  using Vector = Eigen::Map<layers::Vec<S>>;
  struct Sizes {
    Index C, H, F, V, P, L;
    Index B;        // max_batch
    Index Nmax;     // token columns of B rows
    Index att_max;  // attention probabilities of B rows: H * sum over sequences of len^2
    bool rope, prefix;
  };
  struct Norm {
    Matrix out;   // (C,N)
    Vector mean;  // (N), read with norm=layer only
    Vector rstd;  // (N)
  };
  struct Block {
    Norm norm1;
    Matrix qkv;   // (3C,N) q;k;v per column, q and k after RoPE
    Vector att;   // per sequence (H,len,len) probabilities, row = query, column = key, 0 where masked
    Matrix atty;  // (C,N) attention output before wo, heads concatenated
    Matrix mid;   // (C,N) residual stream after the attention sublayer
    Norm norm2;
    Matrix fch;      // (F,N) pre-activation; the forward overwrites it with the activation's derivative
    Matrix fch_act;  // (F,N) after the nonlinearity
  };
  // prefix-bidirectional: position t of row b as read from pass (b,t), for the accessors
  struct Gathered {
    std::vector<Matrix> hidden;  // L+1 x (C,B*P)
    std::vector<Matrix> mid;     // L x (C,B*P)
    std::vector<Vector> att;     // L x (B,H,P,P)
    Matrix logits;               // (V,B*P)
  };

  std::vector<Matrix> res;    // L+1 x (C,N): res[0] the embeddings, res[l+1] after block l
  std::vector<Block> blocks;  // L
  Norm norm_f;
  Matrix logits;  // (V,N)
  Matrix probs;   // (V,N)
  // backward scratch
  Matrix dres;                // (C,N) gradient w.r.t. the residual stream
  Matrix dln;                 // (C,N) gradient w.r.t. a norm's output
  Matrix dqkv;                // (3C,N)
  Matrix datty;               // (C,N)
  Matrix dfch;                // (F,N)
  Matrix dlogits;             // (V,N)
  Matrix rope_cos, rope_sin;  // (D/2,P) with pos=rope, else empty
  Gathered gathered;          // empty unless prefix-bidirectional
  Index size;                 // values spanned; with base = nullptr, the buffer size to allocate

  ActivationViews(S* base, const Sizes& s)
      : arena_{base},
        res(matrices(s.L + 1, s.C, s.Nmax)),
        blocks(make_blocks(s)),
        norm_f(norm(s)),
        logits(matrix(s.V, s.Nmax)),
        probs(matrix(s.V, s.Nmax)),
        dres(matrix(s.C, s.Nmax)),
        dln(matrix(s.C, s.Nmax)),
        dqkv(matrix(3 * s.C, s.Nmax)),
        datty(matrix(s.C, s.Nmax)),
        dfch(matrix(s.F, s.Nmax)),
        dlogits(matrix(s.V, s.Nmax)),
        rope_cos(matrix(s.rope ? s.C / s.H / 2 : 0, s.P)),
        rope_sin(matrix(s.rope ? s.C / s.H / 2 : 0, s.P)),
        gathered{matrices(s.prefix ? s.L + 1 : 0, s.C, s.B * s.P), matrices(s.prefix ? s.L : 0, s.C, s.B * s.P),
                 vectors(s.prefix ? s.L : 0, s.B * s.H * s.P * s.P), matrix(s.prefix ? s.V : 0, s.B * s.P)},
        size(arena_.used) {}

 private:
  Matrix matrix(Index rows, Index cols) { return Matrix(arena_.take(rows * cols), rows, cols); }
  Vector vector(Index n) { return Vector(arena_.take(n), n); }
  std::vector<Matrix> matrices(Index count, Index rows, Index cols) {
    std::vector<Matrix> out;
    for (Index i = 0; i < count; ++i) out.push_back(matrix(rows, cols));
    return out;
  }
  std::vector<Vector> vectors(Index count, Index n) {
    std::vector<Vector> out;
    for (Index i = 0; i < count; ++i) out.push_back(vector(n));
    return out;
  }
  Norm norm(const Sizes& s) { return {matrix(s.C, s.Nmax), vector(s.Nmax), vector(s.Nmax)}; }
  std::vector<Block> make_blocks(const Sizes& s) {
    std::vector<Block> out;
    for (Index l = 0; l < s.L; ++l)
      out.push_back({norm(s), matrix(3 * s.C, s.Nmax), vector(s.att_max), matrix(s.C, s.Nmax), matrix(s.C, s.Nmax),
                     norm(s), matrix(s.F, s.Nmax), matrix(s.F, s.Nmax)});
    return out;
  }
};

}  // namespace p0sim::sim
