#pragma once
// The tiny transformer of DESIGN.md section 3, read top to bottom like nanoGPT's model.py:
//   x = tok_emb[token] (+ pos_emb);  for each block: x = x + attn(norm1(x)); x = x + mlp(norm2(x));
//   logits = norm_f(x) lm_head^T;  loss = mean next-token cross-entropy.
// Parameters, gradients and activations each live in one flat buffer with named views.
// Legend: B batch, P positions the model sees (T, or T+1 with BOS), C d_model, H heads, D = C/H,
// F d_ff, V vocab (V+1 embedding rows with BOS), L layers.
#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/model_enums.hpp"

namespace p0sim::sim {

template <typename S>
struct ParamViews;  // sim/model_views.hpp
template <typename S>
class ActivationViews;

struct ModelConfig {
  int vocab = 64;    // V
  int d_model = 64;  // C
  int heads = 4;     // H, C % H == 0
  int layers = 2;    // L >= 1
  int d_ff = 256;    // F (the CLI default is 4C)
  int seq_len = 32;  // T >= 2: tokens per input row (rows hold T+1 tokens: inputs and targets)
  Mask mask = Mask::causal;
  Attn attn = Attn::softmax;
  PosEnc pos = PosEnc::none;
  bool bos = false;  // prepend token id V to every input row
  Norm norm = Norm::rms;
  Act act = Act::gelu;

  int positions() const { return seq_len + (bos ? 1 : 0); }  // P
  int embed_rows() const { return vocab + (bos ? 1 : 0); }
  int head_dim() const { return d_model / heads; }  // D
};

// Throws p0sim::UsageError naming the option (--d-model, --heads, --seq-len, --vocab, --pos, ...).
void validate(const ModelConfig& c);

// One named tensor inside the flat parameter buffer (names and shapes exactly as DESIGN.md).
struct TensorInfo {
  std::string name;                 // e.g. "blocks.0.attn.wq"
  std::vector<Eigen::Index> shape;  // row-major, e.g. {C, C}
  Eigen::Index offset = 0;          // into the flat buffer
  Eigen::Index size = 0;
  bool decay = false;  // a matrix: weight decay applies under DecayGroup::matrices (sim/optimizer.hpp)
};
std::vector<TensorInfo> parameter_layout(const ModelConfig& c);

template <typename Scalar>
class Model {
 public:
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

  // Sizes every buffer for up to max_batch rows; nothing allocates after construction.
  Model(const ModelConfig& config, int max_batch);
  // A model owns its buffers. No caller needs a second model sharing or duplicating them (a replica
  // or a probe model is built from the config and given the parameters), so copying is not offered.
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  const ModelConfig& config() const;
  const std::vector<TensorInfo>& layout() const;
  int max_batch() const;

  Eigen::Map<Vector> params();
  Eigen::Map<const Vector> params() const;
  Eigen::Map<Vector> grads();
  Eigen::Map<const Vector> grads() const;
  const TensorInfo& tensor(const std::string& name) const;  // throws std::out_of_range

  // DESIGN.md init: every matrix N(0, 0.02^2), wo and w2 N(0, (0.02/sqrt(2L))^2), gains 1, biases 0;
  // or PyTorch's defaults (Init::torch).
  void init(std::uint64_t seed, Init scheme = Init::gpt2);

  // rows: (batch, T+1) int32 token ids, row-major. Inputs are the first T tokens (BOS prepended
  // when config.bos), targets the next ones (with BOS, position 0 predicts rows[:,0]); so there
  // are batch*P predictions. Returns the mean cross-entropy and keeps the activations.
  Scalar forward(const std::int32_t* rows, int batch);
  void zero_grad();
  // Accumulates d(mean loss)/d(params) into grads() for the preceding forward().
  void backward();

  // Activations of the last forward (batch = last_batch()):
  int last_batch() const;
  const Scalar* logits() const;           // (B,P,V)
  const Scalar* hidden(int l) const;      // l in 0..L: residual stream before block 0 / after block l-1, (B,P,C)
  const Scalar* hidden_mid(int l) const;  // l in 0..L-1: after block l's attention sublayer, (B,P,C)
  const Scalar* attention(int l) const;   // l in 0..L-1: (B,H,P,P), row = query, column = key, 0 where masked
  // Block l's value vector at position 0 of row b, (C) heads concatenated (after the norm and wv).
  // prefix-bidirectional: in the pass over the prefix 0..pass (position 0 differs between passes);
  // `pass` is ignored under the other masks, where position 0 is one column.
  const Scalar* value_at_position0(int l, int b, int pass = 0) const;
  // prefix-bidirectional: position t's values (hidden, attention row, logits) are those of the pass
  // over the prefix 0..t, the pass that predicts token t+1.

  // Every named activation of the last forward and every named parameter (sim/model_views.hpp), for
  // readers that want them all (the Python module's activation cache). Valid until the next forward.
  const ActivationViews<Scalar>& activation_views() const;
  const ParamViews<Scalar>& param_views() const;

  // Ablations, for evaluation only (backward() refuses while one is set): from the next forward on,
  // replace block `layer`'s head `head` output (its D rows of the attention output, before wo) or,
  // with head = -1, its MLP hidden activation (F rows, after the nonlinearity) at every position by
  // `value` (D or F entries; empty = zeros). clear_ablation() restores the model.
  void set_ablation(int layer, int head, std::vector<Scalar> value);
  void clear_ablation();
  // The mean over every position of the last forward of that head's output (D) or, with head = -1,
  // of the MLP hidden activation (F): what a mean ablation substitutes.
  std::vector<Scalar> mean_component_output(int layer, int head) const;

  // Position-0 scaling, for evaluation only (backward() refuses while one is set): from the next
  // forward on, the residual stream at position 0 of every row (prefix-bidirectional: position 0 of
  // every prefix pass) is multiplied by `factor` right after block `layer` (0..L-1). hidden(layer+1)
  // returns the scaled state, and every later block, the final norm and the logits read it; blocks
  // 0..layer are untouched. Position 0 is the first position the model sees: with config.bos, the
  // BOS position, not the first token. factor = 1 changes no bit. A bad layer throws
  // std::out_of_range, a non-finite factor std::invalid_argument. clear_position0_scale() restores
  // the model. (The training step never reads it and allocates nothing for it.)
  void set_position0_scale(int layer, Scalar factor);
  void clear_position0_scale();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

extern template class Model<float>;
extern template class Model<double>;

}  // namespace p0sim::sim
