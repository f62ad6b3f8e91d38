#pragma once
// The layer kernels' shared vocabulary: how activations and weights are laid out, and the Eigen maps
// over them. Every layer header holds one layer, its forward next to its backward (llm.c style).
// Legend: N token columns in the batch (B*P, or the packed prefixes of prefix-bidirectional),
// C d_model, H heads, D = C/H, F d_ff, V vocab (rows of the embedding table), P positions.
// Layout: a row-major (N,C) activation buffer is the column-major C x N matrix `Cols`, one token
// per column; a row-major (out,in) weight is the column-major in x out matrix W^T, so a linear
// layer y = x W^T is `out.noalias() = Wt.transpose() * in` and Eigen's GEMM sees contiguous panels.
// Argument order: outputs, caches kept for backward, inputs, weights, sizes.
// Forward assigns its outputs; backward accumulates into parameter gradients and into dinp.
// Nothing here allocates: every buffer is passed in.
#include <Eigen/Core>

namespace p0sim::sim::layers {

using Eigen::Index;
template <typename S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;  // column-major
template <typename S>
using Cols = Eigen::Map<Mat<S>>;
template <typename S>
using CCols = Eigen::Map<const Mat<S>>;
template <typename S>
using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;

inline constexpr Index kLane = 16;  // values per vector chunk (one AVX-512 register of float)

}  // namespace p0sim::sim::layers
