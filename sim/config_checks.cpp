// The checks of sim's configurations (model, training, probes) that every entry point runs before
// any work. Kept apart from the model, the training loop and the probes so that the sanitize
// preset's libFuzzer coverage instrumentation, which leaves those hot files out
// (tests/fuzz/coverage_ignorelist.txt.in), still reaches them: the config fuzz target runs them
// through the experiment reader.
#include <cmath>
#include <string>

#include "common/errors.hpp"
#include "common/format.hpp"
#include "sim/data.hpp"
#include "sim/model.hpp"
#include "sim/probe_trace.hpp"
#include "sim/train.hpp"

namespace p0sim::sim {
namespace {

void check_fraction(const char* field, double v) {
  if (!(std::isfinite(v) && v >= 0.0 && v <= 1.0)) throw ConfigError(field, "must be in [0, 1], got " + fmt17(v));
}

}  // namespace

void validate(const ModelConfig& c) {
  // Upper bounds keep every buffer size far inside Index and int token ids.
  if (c.vocab < 2 || c.vocab > (1 << 20))
    throw ConfigError("vocab", "must be in 2..1048576, got " + std::to_string(c.vocab));
  if (c.d_model < 1 || c.d_model > 65536)
    throw ConfigError("d_model", "must be in 1..65536, got " + std::to_string(c.d_model));
  if (c.heads < 1 || c.d_model % c.heads != 0)
    throw ConfigError("heads",
                      "must divide d_model (" + std::to_string(c.d_model) + "), got " + std::to_string(c.heads));
  if (c.layers < 1 || c.layers > 1024)
    throw ConfigError("layers", "must be in 1..1024, got " + std::to_string(c.layers));
  if (c.d_ff < 1 || c.d_ff > (1 << 20))
    throw ConfigError("d_ff", "must be in 1..1048576, got " + std::to_string(c.d_ff));
  if (c.seq_len < 2 || c.seq_len > 65536)
    throw ConfigError("seq_len", "must be in 2..65536, got " + std::to_string(c.seq_len));
  if (c.pos == PosEnc::rope && c.head_dim() % 2 != 0)
    throw ConfigError("pos", "rope needs an even head dimension d_model/heads, got " + std::to_string(c.head_dim()));
}

void validate(const ProbeConfig& c) {
  if (c.every < 0) throw ConfigError("probe_every", "must be at least 0 (0 = off), got " + std::to_string(c.every));
  // p0_cos is pairwise, so at least two rows.
  if (c.batch < 2) throw ConfigError("probe_batch", "must be at least 2, got " + std::to_string(c.batch));
  check_fraction("emerge_attn", c.emerge_attn);
  check_fraction("emerge_accuracy", c.emerge_accuracy);
  check_fraction("emerge_cos", c.emerge_cos);
  check_fraction("sink_eps", c.sink_eps);
  if (!(std::isfinite(c.emerge_ratio) && c.emerge_ratio > 0.0))
    throw ConfigError("emerge_ratio", "must be a finite number > 0, got " + fmt17(c.emerge_ratio));
}

void validate(const TrainConfig& c) {
  validate(c.model);
  if (c.data.vocab != c.model.vocab) throw ConfigError("vocab", "data and model vocab differ");
  if (c.data.seq_len != c.model.seq_len) throw ConfigError("seq_len", "data and model sequence lengths differ");
  if (c.batch < 1) throw ConfigError("batch", "must be at least 1, got " + std::to_string(c.batch));
  if (c.steps < 0) throw ConfigError("steps", "must be at least 0, got " + std::to_string(c.steps));
  if (!(std::isfinite(c.lr) && c.lr > 0.0)) throw ConfigError("lr", "must be a finite number > 0, got " + fmt17(c.lr));
  if (c.warmup < 0) throw ConfigError("warmup", "must be at least 0, got " + std::to_string(c.warmup));
  if (!(std::isfinite(c.optim.weight_decay) && c.optim.weight_decay >= 0.0))
    throw ConfigError("weight_decay", "must be a finite number >= 0, got " + fmt17(c.optim.weight_decay));
  if (!(c.optim.beta1 >= 0.0 && c.optim.beta1 < 1.0))
    throw ConfigError("beta1", "must be in [0, 1), got " + fmt17(c.optim.beta1));
  if (!(c.optim.beta2 >= 0.0 && c.optim.beta2 < 1.0))
    throw ConfigError("beta2", "must be in [0, 1), got " + fmt17(c.optim.beta2));
  if (!(c.optim.momentum >= 0.0 && c.optim.momentum < 1.0))
    throw ConfigError("momentum", "must be in [0, 1), got " + fmt17(c.optim.momentum));
  if (!(std::isfinite(c.clip) && c.clip >= 0.0))
    throw ConfigError("clip", "must be a finite number >= 0 (0 = off), got " + fmt17(c.clip));
  if (c.threads < 1) throw ConfigError("threads", "must be at least 1");
  if (c.log_every < 1) throw ConfigError("log_every", "must be at least 1");
  DataGenerator check(c.data);  // the data options' own checks
  validate(c.probe);
  if (c.ablate && c.probe.every <= 0)
    throw ConfigError("ablate", "needs probes (probe_every > 0): ablations are measured on the probe batch");
}

}  // namespace p0sim::sim
