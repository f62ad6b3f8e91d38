#pragma once
// Embedding: x = tok_emb[token] (+ pos_emb[position])
// Legend and layout: sim/layers/tensor.hpp.
#include <cstdint>

#include "sim/layers/tensor.hpp"

namespace p0sim::sim::layers {

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

}  // namespace p0sim::sim::layers
