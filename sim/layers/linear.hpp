#pragma once
// Linear y = x W^T, W stored (O,I) row-major.
// Legend and layout: sim/layers/tensor.hpp.
#include "sim/gemm.hpp"
#include "sim/layers/tensor.hpp"

namespace p0sim::sim::layers {

template <typename S>
void matmul_reserve(GemmSpace<S>& ws, Index N, Index I, Index O) {
  ws.reserve(O, N, I);
  ws.reserve(I, O, N);
  ws.reserve(I, N, O);
}
// (O,N) <- (I,N); accumulate=true adds to out (a residual connection fused into the GEMM).
template <typename S>
void matmul_forward(S* out, const S* inp, const S* weight, Index N, Index I, Index O, bool accumulate,
                    GemmSpace<S>& ws) {
  gemm<S, true, false>(O, N, I, S(1), weight, I, inp, I, accumulate, out, O, ws);  // (O,N) = W (O,I) x (I,N)
}
template <typename S>
void matmul_backward(S* dinp, S* dweight, const S* dout, const S* inp, const S* weight, Index N, Index I, Index O,
                     GemmSpace<S>& ws) {
  gemm<S, false, true>(I, O, N, S(1), inp, I, dout, O, true, dweight, I, ws);  // dW^T (I,O) += x (I,N) dy^T (N,O)
  if (dinp) gemm<S, false, false>(I, N, O, S(1), weight, I, dout, O, true, dinp, I, ws);  // (I,N) += W^T dy
}

}  // namespace p0sim::sim::layers
