#pragma once
// `p0sim train --warm-start circuit`: start training from the hand-wired P0-Sink circuit
// (plus small Gaussian noise) instead of the random init, and say afterwards whether gradient
// descent kept, sharpened or dismantled it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model.hpp"
#include "sim/probe_trace.hpp"
#include "study/circuit.hpp"
#include "study/run_options.hpp"

namespace p0sim::study {

// The circuit point that fits `model`'s architecture (d = C, T, V, H; alpha, beta, c, neuron scale
// and sink gain from `shape`). Throws UsageError naming --warm-start when the architecture cannot
// carry the circuit: it needs L = 2, RMSNorm, GELU, softmax attention, no positional encoding, no
// BOS and V <= C - 2 (study/circuit.hpp).
CircuitPoint warm_start_point(const sim::ModelConfig& model, const CircuitPoint& shape);

// Writes the circuit's weights into `model` (its MLP neuron becomes hidden unit 0 of the d_ff
// units; the others start at zero) and adds N(0, noise^2) to every parameter. Deterministic in seed.
void warm_start_from_circuit(sim::Model<float>& model, const CircuitPoint& p, std::uint64_t seed, double noise);

// The initial weights a run's --warm-start asks for, as sim::TrainControl::initialise: empty (the
// seeded init) for none, else the circuit fitting the run's model plus --warm-start-noise. Throws
// UsageError naming --warm-start when the circuit cannot be wired or probes are off (its report needs them).
std::function<void(sim::Model<float>&)> warm_start_initialiser(const RunSpec& spec);

// What training did to the circuit, from the probe trace (first probe = the wired weights):
//   "not-held"    the wired weights did not meet the high-norm and sink criteria to begin with;
//   "dismantled"  they did, and the last probe does not;
//   "sharpened"   both hold at the end and max_l p0_norm_ratio grew by more than 25%;
//   "kept"        both hold at the end otherwise.
nlohmann::json warm_start_report(const std::vector<sim::ProbeRecord>& trace);

}  // namespace p0sim::study
