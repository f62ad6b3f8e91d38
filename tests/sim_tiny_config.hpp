#pragma once
// The smallest training setup the sim and CLI tests share: V = 8, C = 16, H = 2, L = 2, F = 32,
// T = 8, batch 4, lr 3e-3, 2 triggers. Each test sets its own steps, seed and schedule on top, so a
// change here moves every such test together (the CLI test mirrors it as a command line).
#include "sim/train.hpp"

namespace p0sim::test {

inline sim::TrainConfig tiny_train_config(sim::Task task) {
  sim::TrainConfig c;
  c.model.vocab = c.data.vocab = 8;
  c.model.d_model = 16;
  c.model.heads = 2;
  c.model.layers = 2;
  c.model.d_ff = 32;
  c.model.seq_len = c.data.seq_len = 8;
  c.data.task = task;
  c.data.triggers = 2;
  c.batch = 4;
  c.lr = 3e-3;
  return c;
}

}  // namespace p0sim::test
