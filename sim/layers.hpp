#pragma once
// The layer kernels of the tiny transformer, one header per layer (legend and layout conventions:
// sim/layers/tensor.hpp).
#include "sim/layers/activation.hpp"
#include "sim/layers/attention.hpp"
#include "sim/layers/embedding.hpp"
#include "sim/layers/linear.hpp"
#include "sim/layers/loss.hpp"
#include "sim/layers/norm.hpp"
#include "sim/layers/rope.hpp"
