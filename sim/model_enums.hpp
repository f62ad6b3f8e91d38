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

}  // namespace p0sim::sim

namespace p0sim {
template <>
struct EnumNames<sim::Mask> {
  static constexpr std::array<std::string_view, 3> names = {"causal", "bidirectional", "prefix-bidirectional"};
};
template <>
struct EnumNames<sim::Attn> {
  static constexpr std::array<std::string_view, 3> names = {"softmax", "softmax1", "sigmoid"};
};
template <>
struct EnumNames<sim::PosEnc> {
  static constexpr std::array<std::string_view, 3> names = {"none", "rope", "absolute"};
};
template <>
struct EnumNames<sim::Norm> {
  static constexpr std::array<std::string_view, 2> names = {"rms", "layer"};
};
template <>
struct EnumNames<sim::Act> {
  static constexpr std::array<std::string_view, 2> names = {"gelu", "relu"};
};
}  // namespace p0sim
