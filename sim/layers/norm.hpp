#pragma once
// RMSNorm / LayerNorm over C, eps 1e-5; or none: the gain alone.
// Legend and layout: sim/layers/tensor.hpp.
#include <cmath>

#include "sim/layers/tensor.hpp"
#include "sim/model_enums.hpp"

namespace p0sim::sim::layers {

inline constexpr double norm_eps = 1e-5;

// (C,N) -> (C,N); caches mean (N) (LayerNorm only) and rstd (N) for the backward.
template <typename S>
void norm_forward(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias, Index N, Index C, Norm kind) {
  CCols<S> x(inp, C, N);
  Cols<S> y(out, C, N);
  Eigen::Map<const Vec<S>> g(weight, C);
  const S eps = static_cast<S>(norm_eps);
  for (Index n = 0; n < N; ++n) {
    auto xc = x.col(n);
    if (kind == Norm::none) {
      rstd[n] = S(1);
      y.col(n) = xc.cwiseProduct(g);
    } else if (kind == Norm::rms) {
      const S r = S(1) / std::sqrt(xc.squaredNorm() / static_cast<S>(C) + eps);
      rstd[n] = r;
      y.col(n) = (xc * r).cwiseProduct(g);
    } else {
      const S m = xc.mean();
      const S var = (xc.array() - m).square().sum() / static_cast<S>(C);
      const S r = S(1) / std::sqrt(var + eps);
      mean[n] = m;
      rstd[n] = r;
      y.col(n) = ((xc.array() - m) * r * g.array() + Eigen::Map<const Vec<S>>(bias, C).array()).matrix();
    }
  }
}
template <typename S>
void norm_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* mean, const S* rstd,
                   const S* weight, Index N, Index C, Norm kind) {
  CCols<S> x(inp, C, N), dy(dout, C, N);
  Cols<S> dx(dinp, C, N);
  Eigen::Map<const Vec<S>> g(weight, C);
  Eigen::Map<Vec<S>> dg(dweight, C);
  const S invC = S(1) / static_cast<S>(C);
  if (kind == Norm::none) {  // y = g x: dx = g dy, dg = sum_n dy x
    for (Index n = 0; n < N; ++n) {
      dx.col(n).array() += dy.col(n).array() * g.array();
      dg.array() += dy.col(n).array() * x.col(n).array();
    }
    return;
  }
  for (Index n = 0; n < N; ++n) {
    const S r = rstd[n];
    const S m = kind == Norm::rms ? S(0) : mean[n];
    // xhat = (x - m) r; y = xhat g (+ b). dxhat = dy g;
    // rms: dx = r (dxhat - xhat mean(dxhat xhat)); layer: also minus mean(dxhat).
    const auto xhat = (x.col(n).array() - m) * r;
    const auto dxhat = dy.col(n).array() * g.array();
    const S proj = (dxhat * xhat).sum() * invC;
    const S shift = kind == Norm::rms ? S(0) : dxhat.sum() * invC;
    dx.col(n).array() += r * (dxhat - shift - xhat * proj);
    dg.array() += dy.col(n).array() * xhat;
    if (kind == Norm::layer) Eigen::Map<Vec<S>>(dbias, C) += dy.col(n);
  }
}

}  // namespace p0sim::sim::layers
