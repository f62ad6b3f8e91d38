#pragma once
// Cross-entropy.
// Legend and layout: sim/layers/tensor.hpp.
#include <cmath>
#include <cstdint>

#include "sim/layers/tensor.hpp"

namespace p0sim::sim::layers {

// probs (V,N) softmax of logits (V,N); returns the sum over columns with target >= 0 of -log p[target].
template <typename S>
double crossentropy_forward(S* probs, const S* logits, const std::int32_t* targets, Index N, Index V) {
  CCols<S> z(logits, V, N);
  Cols<S> p(probs, V, N);
  double total = 0;
  for (Index n = 0; n < N; ++n) {
    const S m = z.col(n).maxCoeff();
    p.col(n).array() = (z.col(n).array() - m).exp();
    const S sum = p.col(n).sum();
    p.col(n) *= S(1) / sum;
    if (targets[n] >= 0) total += static_cast<double>(m - z(targets[n], n)) + std::log(static_cast<double>(sum));
  }
  return total;
}
// dlogits (V,N) accumulates scale * (p - onehot) on columns with a target; scale = 1/(number of
// predictions) is the only place the mean's denominator appears.
// accumulate = false assigns instead (unscored columns get 0), sparing a separate zeroing pass.
template <typename S>
void crossentropy_backward(S* dlogits, const S* probs, const std::int32_t* targets, Index N, Index V, S scale,
                           bool accumulate = true) {
  CCols<S> p(probs, V, N);
  Cols<S> dz(dlogits, V, N);
  for (Index n = 0; n < N; ++n) {
    if (targets[n] < 0) {
      if (!accumulate) dz.col(n).setZero();
      continue;
    }
    if (accumulate)
      dz.col(n) += scale * p.col(n);
    else
      dz.col(n) = scale * p.col(n);
    dz(targets[n], n) -= scale;
  }
}

}  // namespace p0sim::sim::layers
