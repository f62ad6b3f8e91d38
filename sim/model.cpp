// The tiny transformer of DESIGN.md section 3: parameter layout, init, forward, backward; and AdamW.
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
#include "sim/model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/errors.hpp"
#include "common/rng.hpp"
#include "sim/layers.hpp"

namespace p0sim::sim {

using Eigen::Index;
namespace ly = layers;

std::string to_string(Mask m) {
  switch (m) {
    case Mask::causal: return "causal";
    case Mask::bidirectional: return "bidirectional";
    case Mask::prefix_bidirectional: return "prefix-bidirectional";
  }
  return "?";
}
std::string to_string(Attn a) {
  switch (a) {
    case Attn::softmax: return "softmax";
    case Attn::softmax1: return "softmax1";
    case Attn::sigmoid: return "sigmoid";
  }
  return "?";
}
std::string to_string(PosEnc p) {
  switch (p) {
    case PosEnc::none: return "none";
    case PosEnc::rope: return "rope";
    case PosEnc::absolute: return "absolute";
  }
  return "?";
}
std::string to_string(Norm n) { return n == Norm::rms ? "rms" : "layer"; }
std::string to_string(Act a) { return a == Act::gelu ? "gelu" : "relu"; }

void validate(const ModelConfig& c) {
  // Upper bounds keep every buffer size far inside Index and int token ids.
  if (c.vocab < 2 || c.vocab > (1 << 20)) throw UsageError("--vocab", "must be in 2..1048576, got " + std::to_string(c.vocab));
  if (c.d_model < 1 || c.d_model > 65536)
    throw UsageError("--d-model", "must be in 1..65536, got " + std::to_string(c.d_model));
  if (c.heads < 1 || c.d_model % c.heads != 0)
    throw UsageError("--heads", "must divide --d-model (" + std::to_string(c.d_model) + "), got " + std::to_string(c.heads));
  if (c.layers < 1 || c.layers > 1024) throw UsageError("--layers", "must be in 1..1024, got " + std::to_string(c.layers));
  if (c.d_ff < 1 || c.d_ff > (1 << 20)) throw UsageError("--d-ff", "must be in 1..1048576, got " + std::to_string(c.d_ff));
  if (c.seq_len < 2 || c.seq_len > 65536)
    throw UsageError("--seq-len", "must be in 2..65536, got " + std::to_string(c.seq_len));
  if (c.pos == PosEnc::rope && c.head_dim() % 2 != 0)
    throw UsageError("--pos", "rope needs an even head dimension d_model/heads, got " + std::to_string(c.head_dim()));
}

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
  static constexpr Index none = -1;

  // Offsets of one block's tensors in the parameter (and gradient) buffer.
  struct BlockParams {
    Index norm1_w, norm1_b, wqkv, wo, norm2_w, norm2_b, w1, w2;
  };
  // Offsets of one block's activations in the activation buffer.
  struct BlockActs {
    Index ln1, ln1_mean, ln1_rstd;  // (C,N), (N), (N)
    Index qkv;                      // (3C,N), q and k after RoPE
    Index att;                      // per sequence (H,len,len), probabilities
    Index atty;                     // (C,N) attention output before wo
    Index mid;                      // (C,N) residual after the attention sublayer
    Index ln2, ln2_mean, ln2_rstd;  // (C,N), (N), (N)
    Index fch, fch_act;             // (F,N) pre-activation (then its activation's derivative), post-activation
  };

  ModelConfig cfg;
  std::vector<TensorInfo> layout;
  int max_batch = 0;
  Index C, H, F, V, P, L, Nmax, att_max;
  ly::MaskKind mask;
  ly::AttnKind attn;
  ly::NormKind norm;
  ly::ActKind act;
  bool prefix;

  Vector params, grads, acts;
  Index tok_emb, pos_emb = none, norm_f_w, norm_f_b = none, lm_head;
  std::vector<BlockParams> bp;
  std::vector<BlockActs> ba;
  std::vector<Index> res;            // L+1 residual streams (C,N): res[0] embeddings, res[l+1] after block l
  Index lnf, lnf_mean, lnf_rstd;     // (C,N), (N), (N)
  Index logits, probs;               // (V,N)
  Index dres, dln, dqkv, datty, dfch, dlogits, scratch;  // backward scratch
  Index rope_cos = none, rope_sin = none;  // (P, D/2)
  // prefix-bidirectional: (B,P,.) gathers of the last forward for the accessors
  std::vector<Index> g_hidden, g_mid, g_att;
  Index g_logits = none;

  GemmSpace<S> gemm_space;  // packing space of every product, sized below

  // The ablation in force (set_ablation): none when abl_layer < 0.
  Index abl_layer = none, abl_head = none;
  Vector abl_value;  // empty: zeros

  std::vector<ly::Sequence> seqs;
  std::vector<std::int32_t> tokens, positions, targets;  // (N)
  Index nseq = 0, N = 0;
  int batch = 0;

  S* p(Index off) { return params.data() + off; }
  S* g(Index off) { return off == none ? nullptr : grads.data() + off; }
  S* a(Index off) { return acts.data() + off; }
  const S* pc(Index off) const { return off == none ? nullptr : params.data() + off; }

  Impl(const ModelConfig& config, int mb) : cfg(config), layout(parameter_layout(config)), max_batch(mb) {
    if (mb < 1) throw std::invalid_argument("Model: max_batch must be >= 1");
    C = cfg.d_model;
    H = cfg.heads;
    F = cfg.d_ff;
    V = cfg.vocab;
    P = cfg.positions();
    L = cfg.layers;
    prefix = cfg.mask == Mask::prefix_bidirectional;
    mask = cfg.mask == Mask::causal ? ly::MaskKind::causal : ly::MaskKind::full;
    attn = cfg.attn == Attn::softmax ? ly::AttnKind::softmax
           : cfg.attn == Attn::softmax1 ? ly::AttnKind::softmax1
                                        : ly::AttnKind::sigmoid;
    norm = cfg.norm == Norm::rms ? ly::NormKind::rms : ly::NormKind::layer;
    act = cfg.act == Act::gelu ? ly::ActKind::gelu : ly::ActKind::relu;

    const Index B = mb;
    Nmax = prefix ? B * P * (P + 1) / 2 : B * P;
    // attention probabilities per layer: H * sum over sequences of len^2
    att_max = prefix ? B * H * (P * (P + 1) * (2 * P + 1) / 6) : B * H * P * P;
    const Index nseq_max = prefix ? B * P : B;

    // parameters
    auto off = [&](const std::string& name) {
      for (const auto& t : layout)
        if (t.name == name) return t.offset;
      return none;
    };
    tok_emb = off("tok_emb");
    pos_emb = off("pos_emb");
    for (Index l = 0; l < L; ++l) {
      const std::string b = "blocks." + std::to_string(l) + ".";
      bp.push_back({off(b + "norm1.weight"), off(b + "norm1.bias"), off(b + "attn.wq"), off(b + "attn.wo"),
                    off(b + "norm2.weight"), off(b + "norm2.bias"), off(b + "mlp.w1"), off(b + "mlp.w2")});
    }
    norm_f_w = off("norm_f.weight");
    norm_f_b = off("norm_f.bias");
    lm_head = off("lm_head");
    const Index nparams = layout.back().offset + layout.back().size;
    params = Vector::Zero(nparams);
    grads = Vector::Zero(nparams);

    // activations: one flat buffer
    Index total = 0;
    auto take = [&](Index size) {
      const Index at = total;
      total += size;
      return at;
    };
    for (Index l = 0; l <= L; ++l) res.push_back(take(C * Nmax));
    for (Index l = 0; l < L; ++l) {
      BlockActs b{};
      b.ln1 = take(C * Nmax);
      b.ln1_mean = take(Nmax);
      b.ln1_rstd = take(Nmax);
      b.qkv = take(3 * C * Nmax);
      b.att = take(att_max);
      b.atty = take(C * Nmax);
      b.mid = take(C * Nmax);
      b.ln2 = take(C * Nmax);
      b.ln2_mean = take(Nmax);
      b.ln2_rstd = take(Nmax);
      b.fch = take(F * Nmax);
      b.fch_act = take(F * Nmax);
      ba.push_back(b);
    }
    lnf = take(C * Nmax);
    lnf_mean = take(Nmax);
    lnf_rstd = take(Nmax);
    logits = take(V * Nmax);
    probs = take(V * Nmax);
    dres = take(C * Nmax);
    dln = take(C * Nmax);
    dqkv = take(3 * C * Nmax);
    datty = take(C * Nmax);
    dfch = take(F * Nmax);
    dlogits = take(V * Nmax);
    scratch = take(P * P);
    const Index D = C / H;
    if (cfg.pos == PosEnc::rope) {
      rope_cos = take(P * (D / 2));
      rope_sin = take(P * (D / 2));
    }
    if (prefix) {
      for (Index l = 0; l <= L; ++l) g_hidden.push_back(take(B * P * C));
      for (Index l = 0; l < L; ++l) g_mid.push_back(take(B * P * C));
      for (Index l = 0; l < L; ++l) g_att.push_back(take(B * H * P * P));
      g_logits = take(B * P * V);
    }
    acts = Vector::Zero(total);
    if (cfg.pos == PosEnc::rope) ly::rope_table(a(rope_cos), a(rope_sin), P, D);

    ly::matmul_reserve(gemm_space, Nmax, C, 3 * C);
    ly::matmul_reserve(gemm_space, Nmax, C, C);
    ly::matmul_reserve(gemm_space, Nmax, C, F);
    ly::matmul_reserve(gemm_space, Nmax, F, C);
    ly::matmul_reserve(gemm_space, Nmax, C, V);
    ly::attention_reserve(gemm_space, P, D);
    seqs.resize(static_cast<std::size_t>(nseq_max));
    tokens.resize(static_cast<std::size_t>(Nmax));
    positions.resize(static_cast<std::size_t>(Nmax));
    targets.resize(static_cast<std::size_t>(Nmax));
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

  // rows [first, first+count) of a (rows_total,N) activation := abl_value (or 0) in every column
  void ablate(S* act_ptr, Index first, Index count, Index rows_total) {
    auto block = ly::Cols<S>(act_ptr, rows_total, N).middleRows(first, count);
    if (abl_value.size() == 0) block.setZero();
    else block.colwise() = abl_value;
  }

  double forward(const std::int32_t* rows, int B) {
    if (B < 1 || B > max_batch)
      throw std::invalid_argument("Model::forward: batch " + std::to_string(B) + " outside 1.." + std::to_string(max_batch));
    lay_out(rows, B);
    const std::int32_t* tok = tokens.data();
    const std::int32_t* pos = positions.data();
    ly::encoder_forward(a(res[0]), tok, pos, p(tok_emb), pc(pos_emb), N, C);  // (C,N)
    for (Index l = 0; l < L; ++l) {
      const BlockParams& w = bp[static_cast<std::size_t>(l)];
      const BlockActs& b = ba[static_cast<std::size_t>(l)];
      // x = x + attn(norm1(x))
      ly::norm_forward(a(b.ln1), a(b.ln1_mean), a(b.ln1_rstd), a(res[l]), p(w.norm1_w), pc(w.norm1_b), N, C, norm);
      ly::matmul_forward(a(b.qkv), a(b.ln1), p(w.wqkv), N, C, 3 * C, false, gemm_space);  // (3C,N)
      if (cfg.pos == PosEnc::rope) ly::rope_forward(a(b.qkv), pos, a(rope_cos), a(rope_sin), N, C, H);
      ly::attention_forward(a(b.atty), a(b.att), a(b.qkv), seqs.data(), nseq, C, H, mask, attn, gemm_space);  // (C,N)
      if (abl_layer == l && abl_head >= 0) ablate(a(b.atty), abl_head * (C / H), C / H, C);
      ly::Cols<S>(a(b.mid), C, N) = ly::Cols<S>(a(res[l]), C, N);
      ly::matmul_forward(a(b.mid), a(b.atty), p(w.wo), N, C, C, true, gemm_space);  // (C,N) += atty Wo^T
      // x = x + mlp(norm2(x))
      ly::norm_forward(a(b.ln2), a(b.ln2_mean), a(b.ln2_rstd), a(b.mid), p(w.norm2_w), pc(w.norm2_b), N, C, norm);
      ly::matmul_forward(a(b.fch), a(b.ln2), p(w.w1), N, C, F, false, gemm_space);  // (F,N)
      ly::act_forward(a(b.fch_act), a(b.fch), a(b.fch), F * N, act);  // fch becomes act'(fch) for the backward
      if (abl_layer == l && abl_head == none) ablate(a(b.fch_act), 0, F, F);
      ly::Cols<S>(a(res[l + 1]), C, N) = ly::Cols<S>(a(b.mid), C, N);
      ly::matmul_forward(a(res[l + 1]), a(b.fch_act), p(w.w2), N, F, C, true, gemm_space);  // (C,N) += h W2^T
    }
    ly::norm_forward(a(lnf), a(lnf_mean), a(lnf_rstd), a(res[L]), p(norm_f_w), pc(norm_f_b), N, C, norm);
    ly::matmul_forward(a(logits), a(lnf), p(lm_head), N, C, V, false, gemm_space);  // (V,N)
    const double total = ly::crossentropy_forward(a(probs), a(logits), targets.data(), N, V);
    if (prefix) gather();
    return total / static_cast<double>(B * P);
  }

  // prefix-bidirectional: position t of row b is read from the last column of pass (b,t).
  void gather() {
    const Index D2 = P * P;
    for (Index b = 0; b < batch; ++b)
      for (Index t = 0; t < P; ++t) {
        const ly::Sequence& s = seqs[static_cast<std::size_t>(b * P + t)];
        const Index col = s.offset + t, out = b * P + t;
        for (Index l = 0; l <= L; ++l)
          ly::Cols<S>(a(g_hidden[l]), C, batch * P).col(out) = ly::Cols<S>(a(res[l]), C, N).col(col);
        for (Index l = 0; l < L; ++l) {
          ly::Cols<S>(a(g_mid[l]), C, batch * P).col(out) =
              ly::Cols<S>(a(ba[static_cast<std::size_t>(l)].mid), C, N).col(col);
          for (Index h = 0; h < H; ++h) {
            S* row = a(g_att[l]) + (b * H + h) * D2 + t * P;  // (query t, keys)
            const S* src = a(ba[static_cast<std::size_t>(l)].att) + s.att_offset + h * s.len * s.len + t * s.len;
            std::copy(src, src + s.len, row);
            std::fill(row + s.len, row + P, S(0));
          }
        }
        ly::Cols<S>(a(g_logits), V, batch * P).col(out) = ly::Cols<S>(a(logits), V, N).col(col);
      }
  }

  void backward() {
    if (abl_layer != none) throw std::logic_error("Model::backward with an ablation set (ablations are for evaluation)");
    if (batch == 0) throw std::logic_error("Model::backward called before forward");
    const std::int32_t* pos = positions.data();
    auto zero = [&](Index off, Index rows) { ly::Cols<S>(a(off), rows, N).setZero(); };
    ly::crossentropy_backward(a(dlogits), a(probs), targets.data(), N, V, S(1) / static_cast<S>(batch * P), false);
    zero(dln, C);
    ly::matmul_backward(a(dln), g(lm_head), a(dlogits), a(lnf), p(lm_head), N, C, V, gemm_space);
    zero(dres, C);
    ly::norm_backward(a(dres), g(norm_f_w), g(norm_f_b), a(dln), a(res[L]), a(lnf_mean), a(lnf_rstd), p(norm_f_w), N,
                      C, norm);
    for (Index l = L - 1; l >= 0; --l) {
      const BlockParams& w = bp[static_cast<std::size_t>(l)];
      const BlockActs& b = ba[static_cast<std::size_t>(l)];
      // mlp sublayer: dres is dL/d(res[l+1]) and becomes dL/d(mid)
      zero(dfch, F);
      ly::matmul_backward(a(dfch), g(w.w2), a(dres), a(b.fch_act), p(w.w2), N, F, C, gemm_space);
      ly::act_backward_cached(a(dfch), a(b.fch), F * N);
      zero(dln, C);
      ly::matmul_backward(a(dln), g(w.w1), a(dfch), a(b.ln2), p(w.w1), N, C, F, gemm_space);
      ly::norm_backward(a(dres), g(w.norm2_w), g(w.norm2_b), a(dln), a(b.mid), a(b.ln2_mean), a(b.ln2_rstd),
                        p(w.norm2_w), N, C, norm);
      // attention sublayer: dres becomes dL/d(res[l])
      zero(datty, C);
      ly::matmul_backward(a(datty), g(w.wo), a(dres), a(b.atty), p(w.wo), N, C, C, gemm_space);
      ly::attention_backward(a(dqkv), a(scratch), a(datty), a(b.att), a(b.qkv), seqs.data(), nseq, C, H, mask, attn, gemm_space);
      if (cfg.pos == PosEnc::rope) ly::rope_backward(a(dqkv), pos, a(rope_cos), a(rope_sin), N, C, H);
      zero(dln, C);
      ly::matmul_backward(a(dln), g(w.wqkv), a(dqkv), a(b.ln1), p(w.wqkv), N, C, 3 * C, gemm_space);
      ly::norm_backward(a(dres), g(w.norm1_w), g(w.norm1_b), a(dln), a(res[l]), a(b.ln1_mean), a(b.ln1_rstd),
                        p(w.norm1_w), N, C, norm);
    }
    ly::encoder_backward(g(tok_emb), g(pos_emb), a(dres), tokens.data(), pos, N, C);
  }
};

template <typename Scalar>
Model<Scalar>::Model(const ModelConfig& config, int max_batch) : impl_(std::make_shared<Impl>(config, max_batch)) {}

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
void Model<Scalar>::init(std::uint64_t seed) {
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
  return m.acts.data() + (m.prefix ? m.g_logits : m.logits);
}
template <typename Scalar>
const Scalar* Model<Scalar>::hidden(int l) const {
  const Impl& m = *impl_;
  if (l < 0 || l > m.L) throw std::out_of_range("hidden: layer index " + std::to_string(l));
  return m.acts.data() + (m.prefix ? m.g_hidden[l] : m.res[l]);
}
template <typename Scalar>
const Scalar* Model<Scalar>::hidden_mid(int l) const {
  const Impl& m = *impl_;
  if (l < 0 || l >= m.L) throw std::out_of_range("hidden_mid: layer index " + std::to_string(l));
  return m.acts.data() + (m.prefix ? m.g_mid[l] : m.ba[l].mid);
}
template <typename Scalar>
const Scalar* Model<Scalar>::attention(int l) const {
  const Impl& m = *impl_;
  if (l < 0 || l >= m.L) throw std::out_of_range("attention: layer index " + std::to_string(l));
  return m.acts.data() + (m.prefix ? m.g_att[l] : m.ba[l].att);
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
std::vector<Scalar> Model<Scalar>::mean_component_output(int layer, int head) const {
  const Impl& m = *impl_;
  if (layer < 0 || layer >= m.L) throw std::out_of_range("mean_component_output: layer index " + std::to_string(layer));
  if (head < -1 || head >= m.H) throw std::out_of_range("mean_component_output: head index " + std::to_string(head));
  if (m.N == 0) throw std::logic_error("mean_component_output called before forward");
  const auto& b = m.ba[static_cast<std::size_t>(layer)];
  const Index rows = head >= 0 ? m.C : m.F, first = head >= 0 ? head * (m.C / m.H) : 0;
  const Index count = head >= 0 ? m.C / m.H : m.F;
  const typename Impl::Vector mean =
      ly::CCols<Scalar>(m.acts.data() + (head >= 0 ? b.atty : b.fch_act), rows, m.N).middleRows(first, count).rowwise().mean();
  return {mean.data(), mean.data() + mean.size()};
}

template class Model<float>;
template class Model<double>;

// ---------------------------------------------------------------------------------------------------
template <typename Scalar>
AdamW<Scalar>::AdamW(const std::vector<TensorInfo>& layout, const AdamWConfig& config) : config_(config) {
  Index n = 0;
  for (const auto& t : layout) n = std::max(n, t.offset + t.size);
  decay_mask_ = Vector::Zero(n);
  for (const auto& t : layout)
    if (t.decay) decay_mask_.segment(t.offset, t.size).setOnes();
  m_ = Vector::Zero(n);
  v_ = Vector::Zero(n);
}

template <typename Scalar>
void AdamW<Scalar>::step(Eigen::Ref<Vector> params, Eigen::Ref<const Vector> grads, double lr) {
  if (params.size() != m_.size() || grads.size() != m_.size())
    throw std::invalid_argument("AdamW::step: buffer size does not match the layout");
  ++steps_;
  const double t = static_cast<double>(steps_);
  const double bc1 = 1.0 - std::pow(config_.beta1, t);
  const double bc2 = 1.0 - std::pow(config_.beta2, t);
  // torch.optim.AdamW (single-tensor path): p *= 1 - lr*wd; m.lerp_(g, 1-b1); v = b2 v + (1-b2) g^2;
  // p -= (lr/bc1) * m / (sqrt(v)/sqrt(bc2) + eps)
  const Scalar decay = static_cast<Scalar>(lr * config_.weight_decay);
  const Scalar one_m_b1 = static_cast<Scalar>(1.0 - config_.beta1);
  const Scalar b2 = static_cast<Scalar>(config_.beta2), one_m_b2 = static_cast<Scalar>(1.0 - config_.beta2);
  const Scalar step_size = static_cast<Scalar>(lr / bc1);
  const Scalar bc2_sqrt = static_cast<Scalar>(std::sqrt(bc2));
  const Scalar eps = static_cast<Scalar>(config_.eps);
  // one pass over the flat buffers, a register chunk at a time (Eigen's packet sqrt and division are
  // IEEE-exact, so this equals the three whole-buffer passes bit for bit)
  auto update = [&](auto p, auto g, auto m, auto v, auto mask) {
    m += one_m_b1 * (g - m);
    v = b2 * v + one_m_b2 * g.square();
    p = p * (Scalar(1) - decay * mask) - step_size * m / (v.sqrt() / bc2_sqrt + eps);
  };
  using Chunk = Eigen::Array<Scalar, 16, 1>;
  using Part = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  Scalar* p = params.data();
  const Scalar* g = grads.data();
  const Index n = m_.size();
  Index i = 0;
  for (; i + 16 <= n; i += 16)
    update(Eigen::Map<Chunk>(p + i), Eigen::Map<const Chunk>(g + i), Eigen::Map<Chunk>(m_.data() + i),
           Eigen::Map<Chunk>(v_.data() + i), Eigen::Map<const Chunk>(decay_mask_.data() + i));
  if (i < n)
    update(Eigen::Map<Part>(p + i, n - i), Eigen::Map<const Part>(g + i, n - i), Eigen::Map<Part>(m_.data() + i, n - i),
           Eigen::Map<Part>(v_.data() + i, n - i), Eigen::Map<const Part>(decay_mask_.data() + i, n - i));
}

template <typename Scalar>
std::int64_t AdamW<Scalar>::steps() const {
  return steps_;
}
template <typename Scalar>
Eigen::Map<typename AdamW<Scalar>::Vector> AdamW<Scalar>::first_moment() {
  return {m_.data(), m_.size()};
}
template <typename Scalar>
Eigen::Map<typename AdamW<Scalar>::Vector> AdamW<Scalar>::second_moment() {
  return {v_.data(), v_.size()};
}
template <typename Scalar>
void AdamW<Scalar>::set_steps(std::int64_t steps) {
  steps_ = steps;
}

template class AdamW<float>;
template class AdamW<double>;

}  // namespace p0sim::sim
