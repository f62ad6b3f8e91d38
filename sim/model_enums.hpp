#pragma once
// The model's enumerated choices and their names (common/enum_names.hpp), shared by the model's
// configuration and the layer kernels that implement each choice.
#include <array>
#include <string_view>

#include "common/enum_names.hpp"

namespace p0sim::sim {

enum class Mask { causal, bidirectional, prefix_bidirectional, count };
// relu: Guo et al.'s ReLU attention, A[i,j] = relu(s_ij) / (keys query i sees), rows not normalised.
enum class Attn { softmax, softmax1, sigmoid, relu, count };
enum class PosEnc { none, rope, absolute, count };
// none: no normalisation, y = g * x with the learnt gain kept (the parameters are RMSNorm's), so the
// residual's scale reaches the attention logits: a model in which a high-norm state can pay off.
enum class Norm { rms, layer, none, count };
enum class Act { gelu, relu, count };
// The initial weights: gpt2 (DESIGN.md: every matrix N(0, 0.02^2), wo and w2 scaled by 1/sqrt(2L)),
// or torch (PyTorch's module defaults, as in Guo et al.'s code: embeddings N(0,1), a linear weight
// U(-1/sqrt(fan_in), 1/sqrt(fan_in))); norm gains 1 and biases 0 in both.
enum class Init { gpt2, torch, count };

constexpr std::array<std::string_view, 3> enum_names_of(Mask) {
  return {"causal", "bidirectional", "prefix-bidirectional"};
}
constexpr std::array<std::string_view, 4> enum_names_of(Attn) { return {"softmax", "softmax1", "sigmoid", "relu"}; }
constexpr std::array<std::string_view, 3> enum_names_of(PosEnc) { return {"none", "rope", "absolute"}; }
constexpr std::array<std::string_view, 3> enum_names_of(Norm) { return {"rms", "layer", "none"}; }
constexpr std::array<std::string_view, 2> enum_names_of(Act) { return {"gelu", "relu"}; }
constexpr std::array<std::string_view, 2> enum_names_of(Init) { return {"gpt2", "torch"}; }

}  // namespace p0sim::sim
