#pragma once
// MLP activation: gelu (tanh approximation) or relu.
// Legend and layout: sim/layers/tensor.hpp.
#include <cmath>
#include <numbers>

#include "sim/layers/tensor.hpp"
#include "sim/model_enums.hpp"

namespace p0sim::sim::layers {

// (F,N) -> (F,N), elementwise over a flat buffer of M = F*N values.
template <typename S>
void act_forward(S* out, const S* inp, Index M, Act kind) {
  Eigen::Map<const Vec<S>> x(inp, M);
  Eigen::Map<Vec<S>> y(out, M);
  if (kind == Act::relu) {
    y = x.cwiseMax(S(0));
  } else {
    const S k = static_cast<S>(std::sqrt(2.0 / std::numbers::pi));
    const S c = static_cast<S>(0.044715);
    y.array() = S(0.5) * x.array() * (S(1) + (k * (x.array() + c * x.array().cube())).tanh());
  }
}
// In place: d holds dL/d(act output) on entry and dL/d(act input) on return.
template <typename S>
void act_backward_inplace(S* d, const S* inp, Index M, Act kind) {
  Eigen::Map<const Vec<S>> x(inp, M);
  Eigen::Map<Vec<S>> g(d, M);
  if (kind == Act::relu) {
    g.array() = (x.array() > S(0)).select(g.array(), S(0));
  } else {
    const S k = static_cast<S>(std::sqrt(2.0 / std::numbers::pi));
    const S c = static_cast<S>(0.044715);
    const auto xa = x.array();
    const auto th = (k * (xa + c * xa.cube())).tanh();
    g.array() *= S(0.5) * (S(1) + th) + S(0.5) * xa * (S(1) - th.square()) * k * (S(1) + S(3) * c * xa.square());
  }
}

// The model's pair: the forward also keeps the activation's local derivative, so the backward is one
// multiply instead of a second tanh. dact may alias inp (the model overwrites the pre-activation,
// which nothing else reads): each chunk is read before it is written.
template <typename S>
void act_forward(S* out, S* dact, const S* inp, Index M, Act kind) {
  const S k = static_cast<S>(std::sqrt(2.0 / std::numbers::pi));
  const S c = static_cast<S>(0.044715);
  auto chunk = [&](auto x, auto y, auto g) {  // x: a copy of the inputs; y, g: output maps
    if (kind == Act::relu) {
      g = (x > S(0)).select(decltype(x)::Ones(), decltype(x)::Zero());
      y = x * g;
    } else {
      const decltype(x) th = (k * (x + c * x.cube())).tanh();
      y = S(0.5) * x * (S(1) + th);
      g = S(0.5) * (S(1) + th) + S(0.5) * x * (S(1) - th.square()) * k * (S(1) + S(3) * c * x.square());
    }
  };
  using Chunk = Eigen::Array<S, kLane, 1>;
  using Part = Eigen::Array<S, Eigen::Dynamic, 1>;
  Index i = 0;
  for (; i + kLane <= M; i += kLane)
    chunk(Chunk(Eigen::Map<const Chunk>(inp + i)), Eigen::Map<Chunk>(out + i), Eigen::Map<Chunk>(dact + i));
  if (i < M) {
    const Index r = M - i;
    Chunk x;
    x.head(r) = Eigen::Map<const Part>(inp + i, r);
    x.tail(kLane - r).setZero();
    Chunk y, g;
    chunk(x, Eigen::Map<Chunk>(y.data()), Eigen::Map<Chunk>(g.data()));
    Eigen::Map<Part>(out + i, r) = y.head(r);
    Eigen::Map<Part>(dact + i, r) = g.head(r);
  }
}
// In place: d holds dL/d(act output) on entry and dL/d(act input) on return; dact from the forward.
template <typename S>
void act_backward_cached(S* d, const S* dact, Index M) {
  Eigen::Map<Vec<S>>(d, M).array() *= Eigen::Map<const Vec<S>>(dact, M).array();
}

}  // namespace p0sim::sim::layers
