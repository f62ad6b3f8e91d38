#pragma once
// RoPE on q and k (GPT-NeoX layout: pairs (i, i+D/2) rotated by t * 10000^(-2i/D))
// Legend and layout: sim/layers/tensor.hpp.
#include <cmath>
#include <cstdint>

#include "sim/layers/tensor.hpp"

namespace p0sim::sim::layers {

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
void rope_forward(S* qkv, const std::int32_t* positions, const S* cos_t, const S* sin_t, Index N, Index C, Index H) {
  rope_rotate(qkv, positions, cos_t, sin_t, N, C, H, S(1));
}
// dqkv in place: the gradient w.r.t. the rotated q,k becomes the gradient w.r.t. the unrotated ones.
template <typename S>
void rope_backward(S* dqkv, const std::int32_t* positions, const S* cos_t, const S* sin_t, Index N, Index C, Index H) {
  rope_rotate(dqkv, positions, cos_t, sin_t, N, C, H, S(-1));
}

}  // namespace p0sim::sim::layers
