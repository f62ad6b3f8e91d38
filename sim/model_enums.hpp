#pragma once
// The model's enumerated choices and their names (common/enum_names.hpp), shared by the model's
// configuration and the layer kernels that implement each choice.
#include <array>
#include <string_view>

#include "common/enum_names.hpp"

namespace p0sim::sim {

enum class Mask { causal, bidirectional, prefix_bidirectional, count };
enum class Attn { softmax, softmax1, sigmoid, count };
enum class PosEnc { none, rope, absolute, count };
enum class Norm { rms, layer, count };
enum class Act { gelu, relu, count };

// Attention whose rows need not sum to one: probes read it through the row-normalised |A| proxy.
inline bool unnormalised(Attn a) { return a == Attn::sigmoid; }

constexpr std::array<std::string_view, 3> enum_names_of(Mask) {
  return {"causal", "bidirectional", "prefix-bidirectional"};
}
constexpr std::array<std::string_view, 3> enum_names_of(Attn) { return {"softmax", "softmax1", "sigmoid"}; }
constexpr std::array<std::string_view, 3> enum_names_of(PosEnc) { return {"none", "rope", "absolute"}; }
constexpr std::array<std::string_view, 2> enum_names_of(Norm) { return {"rms", "layer"}; }
constexpr std::array<std::string_view, 2> enum_names_of(Act) { return {"gelu", "relu"}; }

}  // namespace p0sim::sim
