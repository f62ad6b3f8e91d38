// The tiny transformer of DESIGN.md section 3: parameter layout, init, forward, backward.
// Legend: B batch, P positions (T or T+1 with BOS), N token columns, C d_model, H heads, D = C/H,
// F d_ff, V vocab, E embedding rows (V or V+1), L layers.
//
// Parameter order in the flat buffer (parameter_layout):
//   tok_emb (E,C), [pos_emb (P,C) if pos=absolute],
//   per block l: norm1.weight (C) [norm1.bias (C)], attn.wq, attn.wk, attn.wv, attn.wo (C,C),
//                norm2.weight (C) [norm2.bias (C)], mlp.w1 (F,C), mlp.w2 (C,F),
//   norm_f.weight (C) [norm_f.bias (C)], lm_head (V,C).
// Biases exist only with norm=layer. wq, wk, wv are adjacent, so together they are one (3C,C)
// weight and q,k,v come from a single GEMM.
// Weight decay: on every matrix (embeddings and lm_head included, PyTorch's "decay the 2-D
// tensors"), never on norm gains or biases.
//
// Columns: each forward lays its predictions out as attention sequences of token columns.
// causal and bidirectional: B sequences of P columns, column b*P + p, so every activation buffer is
// (B,P,.) row-major. prefix-bidirectional: for every row b and target t, one sequence of the t+1
// columns 0..t (attending to each other fully); only its last column is scored, so there are
// B*P(P+1)/2 columns and still B*P predictions. The accessors gather position t from pass t.
//
// Parameters, gradients and activations are each one flat buffer, read and written through the
// named views of sim/model_views.hpp; the kernels are sim/layers/.
#include "sim/model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/errors.hpp"
#include "common/rng.hpp"
#include "sim/layers.hpp"
#include "sim/model_views.hpp"

namespace p0sim::sim {

using Eigen::Index;
namespace ly = layers;

std::vector<TensorInfo> parameter_layout(const ModelConfig& c) {
  validate(c);
  const Index C = c.d_model, F = c.d_ff, V = c.vocab;
  std::vector<TensorInfo> out;
  Index offset = 0;
  auto add = [&](std::string name, std::vector<Index> shape, bool decay) {
    Index size = 1;
    for (Index s : shape) size *= s;
    out.push_back({std::move(name), std::move(shape), offset, size, decay});
    offset += size;
  };
  const bool layer = c.norm == Norm::layer;
  add("tok_emb", {c.embed_rows(), C}, true);
  if (c.pos == PosEnc::absolute) add("pos_emb", {c.positions(), C}, true);
  for (int l = 0; l < c.layers; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    add(b + "norm1.weight", {C}, false);
    if (layer) add(b + "norm1.bias", {C}, false);
    for (const char* w : {"wq", "wk", "wv", "wo"}) add(b + "attn." + w, {C, C}, true);
    add(b + "norm2.weight", {C}, false);
    if (layer) add(b + "norm2.bias", {C}, false);
    add(b + "mlp.w1", {F, C}, true);
    add(b + "mlp.w2", {C, F}, true);
  }
  add("norm_f.weight", {C}, false);
  if (layer) add("norm_f.bias", {C}, false);
  add("lm_head", {V, C}, true);
  return out;
}

// ---------------------------------------------------------------------------------------------------
template <typename Scalar>
struct Model<Scalar>::Impl {
  using S = Scalar;
  using Vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;
  using Matrix = ly::Cols<S>;
  using Params = ParamViews<S>;
  using Acts = ActivationViews<S>;
  static constexpr Index none = -1;

  ModelConfig cfg;
  std::vector<TensorInfo> layout;
  int max_batch;
  typename Acts::Sizes sizes;
  Index C, H, D, F, V, P, L;
  bool prefix, rope;
  ly::MaskKind mask;
  Attn attn;
  Norm norm;
  Act act;

  Vector params, grads, acts;  // the flat buffers, and their views:
  Params p;                    // parameters
  Params g;                    // gradients, the same layout
  Acts a;                      // activations and backward scratch
  GemmSpace<S> gemm_space;     // packing space of every product, sized below

  // The ablation in force (set_ablation): none when abl_layer < 0.
  Index abl_layer = none, abl_head = none;
  Vector abl_value;  // empty: zeros
  // The position-0 scale in force (set_position0_scale): none when p0_layer < 0.
  Index p0_layer = none;
  S p0_factor = S(1);

  // The columns of the last forward (lay_out)
  std::vector<ly::Sequence> seqs;
  std::vector<std::int32_t> tokens, positions, targets;  // (N)
  Index nseq = 0, N = 0;
  int batch = 0;

  static typename Acts::Sizes size_for(const ModelConfig& c, int mb) {
    if (mb < 1) throw std::invalid_argument("Model: max_batch must be >= 1");
    const Index B = mb, P = c.positions(), H = c.heads;
    const bool prefix = c.mask == Mask::prefix_bidirectional;
    return {c.d_model,
            H,
            c.d_ff,
            c.vocab,
            P,
            c.layers,
            B,
            prefix ? B * P * (P + 1) / 2 : B * P,
            prefix ? B * H * (P * (P + 1) * (2 * P + 1) / 6) : B * H * P * P,
            c.pos == PosEnc::rope,
            prefix};
  }

  Impl(const ModelConfig& config, int mb)
      : cfg(config),
        layout(parameter_layout(config)),
        max_batch(mb),
        sizes(size_for(config, mb)),
        C(sizes.C),
        H(sizes.H),
        D(C / H),
        F(sizes.F),
        V(sizes.V),
        P(sizes.P),
        L(sizes.L),
        prefix(sizes.prefix),
        rope(sizes.rope),
        mask(cfg.mask == Mask::causal ? ly::MaskKind::causal : ly::MaskKind::full),
        attn(cfg.attn),
        norm(cfg.norm),
        act(cfg.act),
        params(Vector::Zero(layout.back().offset + layout.back().size)),
        grads(Vector::Zero(params.size())),
        acts(Vector::Zero(Acts(nullptr, sizes).size)),
        p(params.data(), layout, cfg.layers),
        g(grads.data(), layout, cfg.layers),
        a(acts.data(), sizes) {
    if (rope) ly::rope_table(a.rope_cos.data(), a.rope_sin.data(), P, D);
    const Index Nmax = sizes.Nmax;
    ly::matmul_reserve(gemm_space, Nmax, C, 3 * C);
    ly::matmul_reserve(gemm_space, Nmax, C, C);
    ly::matmul_reserve(gemm_space, Nmax, C, F);
    ly::matmul_reserve(gemm_space, Nmax, F, C);
    ly::matmul_reserve(gemm_space, Nmax, C, V);
    ly::attention_reserve(gemm_space, P, D);
    seqs.resize(static_cast<std::size_t>(prefix ? sizes.B * P : sizes.B));
    tokens.resize(static_cast<std::size_t>(Nmax));
    positions.resize(static_cast<std::size_t>(Nmax));
    targets.resize(static_cast<std::size_t>(Nmax));
  }

  // ---- the layers, bound to this model's sizes and the N columns of the last lay_out ----
  void norm_forward(typename Acts::Norm& y, const Matrix& x, const typename Params::Norm& w) {
    ly::norm_forward(y.out.data(), y.mean.data(), y.rstd.data(), x.data(), w.weight.data(), w.bias.data(), N, C, norm);
  }
  void norm_backward(Matrix& dx, typename Params::Norm& dw, const Matrix& dy, const Matrix& x,
                     const typename Acts::Norm& y, const typename Params::Norm& w) {
    ly::norm_backward(dx.data(), dw.weight.data(), dw.bias.data(), dy.data(), x.data(), y.mean.data(), y.rstd.data(),
                      w.weight.data(), N, C, norm);
  }
  // y = x W^T, or y += x W^T (a residual connection fused into the GEMM); W is viewed (in,out)
  void linear_forward(Matrix& y, const Matrix& x, const Matrix& w, bool residual = false) {
    ly::matmul_forward(y.data(), x.data(), w.data(), N, w.rows(), w.cols(), residual, gemm_space);
  }
  void linear_backward(Matrix& dx, Matrix& dw, const Matrix& dy, const Matrix& x, const Matrix& w) {
    ly::matmul_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), N, w.rows(), w.cols(), gemm_space);
  }
  void attention_forward(Matrix& y, typename Acts::Vector& att, const Matrix& qkv) {
    ly::attention_forward(y.data(), att.data(), qkv.data(), seqs.data(), nseq, C, H, mask, attn, gemm_space);
  }
  void attention_backward(Matrix& dqkv, const Matrix& dy, const typename Acts::Vector& att, const Matrix& qkv) {
    ly::attention_backward(dqkv.data(), dy.data(), att.data(), qkv.data(), seqs.data(), nseq, C, H, mask, attn,
                           gemm_space);
  }
  void rope_forward(Matrix& qkv) {
    ly::rope_forward(qkv.data(), positions.data(), a.rope_cos.data(), a.rope_sin.data(), N, C, H);
  }
  void rope_backward(Matrix& dqkv) {
    ly::rope_backward(dqkv.data(), positions.data(), a.rope_cos.data(), a.rope_sin.data(), N, C, H);
  }
  void zero(Matrix& m) { m.leftCols(N).setZero(); }
  // rows [first, first+count) of an activation := abl_value (or 0) in every column
  void ablate(Matrix& m, Index first, Index count) {
    auto block = Matrix(m.data(), m.rows(), N).middleRows(first, count);
    if (abl_value.size() == 0)
      block.setZero();
    else
      block.colwise() = abl_value;
  }
  // column 0 of every sequence (each row, or each prefix pass) *= p0_factor
  void scale_position0(Matrix& m) {
    for (Index s = 0; s < nseq; ++s) m.col(seqs[static_cast<std::size_t>(s)].offset) *= p0_factor;
  }

  double forward(const std::int32_t* rows, int B) {
    if (B < 1 || B > max_batch)
      throw std::invalid_argument("Model::forward: batch " + std::to_string(B) + " outside 1.." +
                                  std::to_string(max_batch));
    lay_out(rows, B);
    ly::encoder_forward(a.res[0].data(), tokens.data(), positions.data(), p.tok_emb.data(), p.pos_emb.data(), N, C);
    for (Index l = 0; l < L; ++l) {
      const typename Params::Block& w = p.blocks[l];
      typename Acts::Block& b = a.blocks[l];
      // x = x + attn(norm1(x)): into mid, the residual copied, then the projection added by its GEMM
      norm_forward(b.norm1, a.res[l], w.norm1);
      linear_forward(b.qkv, b.norm1.out, w.attn.wqkv);
      if (rope) rope_forward(b.qkv);
      attention_forward(b.atty, b.att, b.qkv);
      if (abl_layer == l && abl_head >= 0) ablate(b.atty, abl_head * D, D);
      b.mid.leftCols(N) = a.res[l].leftCols(N);
      linear_forward(b.mid, b.atty, w.attn.wo, true);
      // x = x + mlp(norm2(x)): into res[l+1] likewise
      norm_forward(b.norm2, b.mid, w.norm2);
      linear_forward(b.fch, b.norm2.out, w.mlp.w1);
      ly::act_forward(b.fch_act.data(), b.fch.data(), b.fch.data(), F * N, act);  // fch becomes act'(fch)
      if (abl_layer == l && abl_head == none) ablate(b.fch_act, 0, F);
      a.res[l + 1].leftCols(N) = b.mid.leftCols(N);
      linear_forward(a.res[l + 1], b.fch_act, w.mlp.w2, true);
      if (p0_layer == l) scale_position0(a.res[l + 1]);
    }
    norm_forward(a.norm_f, a.res[L], p.norm_f);
    linear_forward(a.logits, a.norm_f.out, p.lm_head);
    const double total = ly::crossentropy_forward(a.probs.data(), a.logits.data(), targets.data(), N, V);
    if (prefix) gather();
    return total / static_cast<double>(B * P);
  }

  void backward() {
    if (abl_layer != none)
      throw std::logic_error("Model::backward with an ablation set (ablations are for evaluation)");
    if (p0_layer != none) throw std::logic_error("Model::backward with a position-0 scale set (it is for evaluation)");
    if (batch == 0) throw std::logic_error("Model::backward called before forward");
    ly::crossentropy_backward(a.dlogits.data(), a.probs.data(), targets.data(), N, V, S(1) / static_cast<S>(batch * P),
                              false);
    zero(a.dln);
    linear_backward(a.dln, g.lm_head, a.dlogits, a.norm_f.out, p.lm_head);
    zero(a.dres);
    norm_backward(a.dres, g.norm_f, a.dln, a.res[L], a.norm_f, p.norm_f);
    for (Index l = L - 1; l >= 0; --l) {
      const typename Params::Block& w = p.blocks[l];
      typename Params::Block& dw = g.blocks[l];
      const typename Acts::Block& b = a.blocks[l];
      // mlp sublayer: dres is dL/d(res[l+1]) and becomes dL/d(mid)
      zero(a.dfch);
      linear_backward(a.dfch, dw.mlp.w2, a.dres, b.fch_act, w.mlp.w2);
      ly::act_backward_cached(a.dfch.data(), b.fch.data(), F * N);
      zero(a.dln);
      linear_backward(a.dln, dw.mlp.w1, a.dfch, b.norm2.out, w.mlp.w1);
      norm_backward(a.dres, dw.norm2, a.dln, b.mid, b.norm2, w.norm2);
      // attention sublayer: dres becomes dL/d(res[l])
      zero(a.datty);
      linear_backward(a.datty, dw.attn.wo, a.dres, b.atty, w.attn.wo);
      attention_backward(a.dqkv, a.datty, b.att, b.qkv);
      if (rope) rope_backward(a.dqkv);
      zero(a.dln);
      linear_backward(a.dln, dw.attn.wqkv, a.dqkv, b.norm1.out, w.attn.wqkv);
      norm_backward(a.dres, dw.norm1, a.dln, a.res[l], b.norm1, w.norm1);
    }
    ly::encoder_backward(g.tok_emb.data(), g.pos_emb.data(), a.dres.data(), tokens.data(), positions.data(), N, C);
  }

  // Fills the column tables (tokens, positions, targets, sequences) for `rows`.
  void lay_out(const std::int32_t* rows, int B) {
    const Index T = cfg.seq_len, row_len = T + 1;
    for (Index i = 0; i < B * row_len; ++i)
      if (rows[i] < 0 || rows[i] >= V)
        throw UsageError("tokens", "token id " + std::to_string(rows[i]) + " at row " + std::to_string(i / row_len) +
                                       ", column " + std::to_string(i % row_len) + " is outside 0.." +
                                       std::to_string(V - 1));
    const Index shift = cfg.bos ? 1 : 0;  // with BOS, input position p holds token p-1
    auto input = [&](Index b, Index pos) {
      return pos < shift ? static_cast<std::int32_t>(V) : rows[b * row_len + pos - shift];
    };
    auto target = [&](Index b, Index pos) { return rows[b * row_len + pos - shift + 1]; };
    Index col = 0, att = 0;
    nseq = 0;
    for (Index b = 0; b < B; ++b) {
      for (Index t = prefix ? 0 : P - 1; t < P; ++t) {  // one pass per target t, or one pass over all P
        const Index len = t + 1;
        seqs[static_cast<std::size_t>(nseq++)] = {col, len, att};
        att += H * len * len;
        for (Index pos = 0; pos < len; ++pos, ++col) {
          tokens[static_cast<std::size_t>(col)] = input(b, pos);
          positions[static_cast<std::size_t>(col)] = static_cast<std::int32_t>(pos);
          targets[static_cast<std::size_t>(col)] = (!prefix || pos == t) ? target(b, pos) : -1;
        }
      }
    }
    N = col;
    batch = B;
  }

  // prefix-bidirectional: position t of row b is read from the last column of pass (b,t).
  void gather() {
    const Index D2 = P * P;
    for (Index b = 0; b < batch; ++b)
      for (Index t = 0; t < P; ++t) {
        const ly::Sequence& s = seqs[static_cast<std::size_t>(b * P + t)];
        const Index col = s.offset + t, out = b * P + t;
        for (Index l = 0; l <= L; ++l) a.gathered.hidden[l].col(out) = a.res[l].col(col);
        for (Index l = 0; l < L; ++l) {
          a.gathered.mid[l].col(out) = a.blocks[l].mid.col(col);
          for (Index h = 0; h < H; ++h) {
            S* row = a.gathered.att[l].data() + (b * H + h) * D2 + t * P;  // (query t, keys)
            const S* src = a.blocks[l].att.data() + s.att_offset + h * s.len * s.len + t * s.len;
            std::copy(src, src + s.len, row);
            std::fill(row + s.len, row + P, S(0));
          }
        }
        a.gathered.logits.col(out) = a.logits.col(col);
      }
  }
};

template <typename Scalar>
Model<Scalar>::Model(const ModelConfig& config, int max_batch) : impl_(std::make_unique<Impl>(config, max_batch)) {}
template <typename Scalar>
Model<Scalar>::Model(Model&&) noexcept = default;
template <typename Scalar>
Model<Scalar>& Model<Scalar>::operator=(Model&&) noexcept = default;
template <typename Scalar>
Model<Scalar>::~Model() = default;

template <typename Scalar>
const ModelConfig& Model<Scalar>::config() const {
  return impl_->cfg;
}
template <typename Scalar>
const std::vector<TensorInfo>& Model<Scalar>::layout() const {
  return impl_->layout;
}
template <typename Scalar>
int Model<Scalar>::max_batch() const {
  return impl_->max_batch;
}
template <typename Scalar>
Eigen::Map<typename Model<Scalar>::Vector> Model<Scalar>::params() {
  return {impl_->params.data(), impl_->params.size()};
}
template <typename Scalar>
Eigen::Map<const typename Model<Scalar>::Vector> Model<Scalar>::params() const {
  return {impl_->params.data(), impl_->params.size()};
}
template <typename Scalar>
Eigen::Map<typename Model<Scalar>::Vector> Model<Scalar>::grads() {
  return {impl_->grads.data(), impl_->grads.size()};
}
template <typename Scalar>
Eigen::Map<const typename Model<Scalar>::Vector> Model<Scalar>::grads() const {
  return {impl_->grads.data(), impl_->grads.size()};
}
template <typename Scalar>
const TensorInfo& Model<Scalar>::tensor(const std::string& name) const {
  for (const auto& t : impl_->layout)
    if (t.name == name) return t;
  throw std::out_of_range("no parameter named '" + name + "'");
}

template <typename Scalar>
void Model<Scalar>::init(std::uint64_t seed, Init scheme) {
  const double base = 0.02, residual = 0.02 / std::sqrt(2.0 * impl_->cfg.layers);
  auto ends_with = [](const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  for (std::size_t i = 0; i < impl_->layout.size(); ++i) {
    const TensorInfo& t = impl_->layout[i];
    Scalar* w = impl_->params.data() + t.offset;
    if (ends_with(t.name, ".weight")) {
      std::fill(w, w + t.size, Scalar(1));
    } else if (ends_with(t.name, ".bias")) {
      std::fill(w, w + t.size, Scalar(0));
    } else {
      // one stream per tensor, so a tensor's values do not depend on the ones before it
      PhiloxStream rng(seed, i);
      if (scheme == Init::torch) {
        if (t.name == "tok_emb" || t.name == "pos_emb") {  // nn.Embedding: N(0, 1)
          for (Index j = 0; j < t.size; ++j) w[j] = static_cast<Scalar>(rng.normal());
        } else {  // nn.Linear (out, in): U(-1/sqrt(in), 1/sqrt(in))
          const double bound = 1.0 / std::sqrt(static_cast<double>(t.shape.back()));
          for (Index j = 0; j < t.size; ++j) w[j] = static_cast<Scalar>(bound * (2.0 * rng.uniform() - 1.0));
        }
        continue;
      }
      const double sigma = ends_with(t.name, "attn.wo") || ends_with(t.name, "mlp.w2") ? residual : base;
      for (Index j = 0; j < t.size; ++j) w[j] = static_cast<Scalar>(sigma * rng.normal());
    }
  }
}

template <typename Scalar>
Scalar Model<Scalar>::forward(const std::int32_t* rows, int batch) {
  return static_cast<Scalar>(impl_->forward(rows, batch));
}
template <typename Scalar>
void Model<Scalar>::zero_grad() {
  impl_->grads.setZero();
}
template <typename Scalar>
void Model<Scalar>::backward() {
  impl_->backward();
}
template <typename Scalar>
int Model<Scalar>::last_batch() const {
  return impl_->batch;
}
template <typename Scalar>
const Scalar* Model<Scalar>::logits() const {
  const Impl& m = *impl_;
  return (m.prefix ? m.a.gathered.logits : m.a.logits).data();
}
template <typename Scalar>
const Scalar* Model<Scalar>::hidden(int l) const {
  const Impl& m = *impl_;
  if (l < 0 || l > m.L) throw std::out_of_range("hidden: layer index " + std::to_string(l));
  return (m.prefix ? m.a.gathered.hidden[l] : m.a.res[l]).data();
}
template <typename Scalar>
const Scalar* Model<Scalar>::hidden_mid(int l) const {
  const Impl& m = *impl_;
  if (l < 0 || l >= m.L) throw std::out_of_range("hidden_mid: layer index " + std::to_string(l));
  return (m.prefix ? m.a.gathered.mid[l] : m.a.blocks[l].mid).data();
}
template <typename Scalar>
const Scalar* Model<Scalar>::value_at_position0(int l, int b, int pass) const {
  const Impl& m = *impl_;
  if (l < 0 || l >= m.L) throw std::out_of_range("value_at_position0: layer index " + std::to_string(l));
  if (b < 0 || b >= m.batch) throw std::out_of_range("value_at_position0: row " + std::to_string(b));
  if (pass < 0 || pass >= m.P) throw std::out_of_range("value_at_position0: pass " + std::to_string(pass));
  const Index seq = m.prefix ? b * m.P + pass : b;
  const Index col = m.seqs[static_cast<std::size_t>(seq)].offset;  // (3C,N): q; k; v
  return m.a.blocks[l].qkv.data() + col * 3 * m.C + 2 * m.C;
}
template <typename Scalar>
const Scalar* Model<Scalar>::attention(int l) const {
  const Impl& m = *impl_;
  if (l < 0 || l >= m.L) throw std::out_of_range("attention: layer index " + std::to_string(l));
  return (m.prefix ? m.a.gathered.att[l] : m.a.blocks[l].att).data();
}

template <typename Scalar>
void Model<Scalar>::set_ablation(int layer, int head, std::vector<Scalar> value) {
  Impl& m = *impl_;
  if (layer < 0 || layer >= m.L) throw std::out_of_range("set_ablation: layer index " + std::to_string(layer));
  if (head < -1 || head >= m.H) throw std::out_of_range("set_ablation: head index " + std::to_string(head));
  const Index width = head >= 0 ? m.C / m.H : m.F;
  if (!value.empty() && static_cast<Index>(value.size()) != width)
    throw std::invalid_argument("set_ablation: value has " + std::to_string(value.size()) + " entries, expected " +
                                std::to_string(width));
  m.abl_layer = layer;
  m.abl_head = head >= 0 ? head : Impl::none;
  m.abl_value = Eigen::Map<const typename Impl::Vector>(value.data(), static_cast<Index>(value.size()));
}
template <typename Scalar>
void Model<Scalar>::clear_ablation() {
  impl_->abl_layer = impl_->abl_head = Impl::none;
  impl_->abl_value.resize(0);
}
template <typename Scalar>
void Model<Scalar>::set_position0_scale(int layer, Scalar factor) {
  Impl& m = *impl_;
  if (layer < 0 || layer >= m.L) throw std::out_of_range("set_position0_scale: layer index " + std::to_string(layer));
  if (!std::isfinite(factor))
    throw std::invalid_argument("set_position0_scale: factor must be finite, got " + std::to_string(factor));
  m.p0_layer = layer;
  m.p0_factor = factor;
}
template <typename Scalar>
void Model<Scalar>::clear_position0_scale() {
  impl_->p0_layer = Impl::none;
  impl_->p0_factor = Scalar(1);
}
template <typename Scalar>
std::vector<Scalar> Model<Scalar>::mean_component_output(int layer, int head) const {
  const Impl& m = *impl_;
  if (layer < 0 || layer >= m.L) throw std::out_of_range("mean_component_output: layer index " + std::to_string(layer));
  if (head < -1 || head >= m.H) throw std::out_of_range("mean_component_output: head index " + std::to_string(head));
  if (m.N == 0) throw std::logic_error("mean_component_output called before forward");
  const auto& b = m.a.blocks[static_cast<std::size_t>(layer)];
  const Index rows = head >= 0 ? m.C : m.F, first = head >= 0 ? head * (m.C / m.H) : 0;
  const Index count = head >= 0 ? m.C / m.H : m.F;
  const typename Impl::Vector mean =
      ly::CCols<Scalar>((head >= 0 ? b.atty : b.fch_act).data(), rows, m.N).middleRows(first, count).rowwise().mean();
  return {mean.data(), mean.data() + mean.size()};
}

template <typename Scalar>
const ActivationViews<Scalar>& Model<Scalar>::activation_views() const {
  return impl_->a;
}

template <typename Scalar>
const ParamViews<Scalar>& Model<Scalar>::param_views() const {
  return impl_->p;
}

template class Model<float>;
template class Model<double>;

}  // namespace p0sim::sim
