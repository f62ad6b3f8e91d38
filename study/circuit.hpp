#pragma once
// The hand-wired circuit: explicit weights for the engine's 2-layer model that single
// out position 0 by the causal mask alone, give it a high norm in a fixed direction, and make the
// layer-1 heads sink onto it. It runs in the engine's own forward (sim::Model<double>).
// Legend: N sequences, T positions, C = d model dimension, H heads, D = C/H, V vocab.
//
// Geometry (derivations in circuit.cpp; the readout's law and the predictions in theory/circuit_law.hpp):
//   token j embeds as e_j ~ N(0, I_C) (i.i.d. Gaussian, so V <= C-2 vectors are linearly
//   independent and span a V-dimensional subspace); u = the last basis vector (NOT orthogonal to
//   the embeddings: their random component along u is what makes the readout noncentral-t);
//   w = a unit vector orthogonal to u and to every embedding (needs V <= C-2).
//   layer 0: Wq = Wk = 0 (uniform causal attention), value/output map v_j = alpha e_j + beta u;
//            one MLP neuron reading r_t = <RMSNorm(h_t), u>, writing c * s_t * w with
//            s_t = gelu(a r_t) / gelu(a R), R = position 0's readout at alpha = -1.
//   layer 1: every head scores query t against key k by G <n_t,w> <n_k,w> / C (n = RMSNorm(h));
//            values and the MLP are zero, so block 1 leaves the stream as it is.
// The engine's MLP has no biases, so a hard threshold on r_t cannot be wired: after RMSNorm every
// pre-activation is (positive scale of h) x (linear functional of h), whose sign cannot separate
// position 0 from its competitors (circuit.cpp). The neuron therefore writes in proportion to
// gelu(a r_t), and position 0 wins because its readout is the largest.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/model.hpp"
#include "theory/circuit_law.hpp"

namespace p0sim::study {

struct CircuitPoint {
  int d = 64;                 // C
  int T = 32;                 // positions
  int vocab = 0;              // V; 0 means d/2
  int heads = 2;              // H, divides d
  double alpha = -1.0;        // value map v_j = alpha e_j + beta u
  double beta = 1.0;          // > 0
  double c = 100.0;           // amplification written at a full readout
  double neuron_scale = 3.0;  // a R: the neuron's pre-activation at position 0 when alpha = -1
  double sink_gain = 1000.0;  // G: layer-1 score between two positions whose states are both along w
                              // (large: competitors keep a large w-share too, so the key-0 edge is small)
  sim::Mask mask = sim::Mask::causal;

  int vocab_size() const { return vocab > 0 ? vocab : d / 2; }
};

// Throws UsageError naming the option (--d, --T, --vocab, --heads, --alpha, --beta, --c, ...).
void validate(const CircuitPoint& p);

// Builds the explicit weights into `model` (config from circuit_model_config(p)); the embedding
// table is drawn from `seed`. Returns nothing: everything the analysis needs is recomputed from p.
void wire_circuit(sim::Model<double>& model, const CircuitPoint& p, std::uint64_t seed);
sim::ModelConfig circuit_model_config(const CircuitPoint& p);

// The law of position 0's readout for this point at the engine's RMSNorm eps (theory::readout_law).
theory::ReadoutLaw readout_law(const CircuitPoint& p);

struct CircuitOptions {
  int sequences = 256;  // per model
  int models = 8;       // independent embedding tables (each a fresh draw of the law)
  std::uint64_t seed = 1;
  double sink_eps = 0.3;
};

struct CircuitResult {
  // identification: margin = r_0 - max_{t>=1} r_t per sequence
  double margin_min = 0, margin_mean = 0;
  double identified_frac = 0;  // margin > identify_tol
  double identified_pred = 0;  // causal, alpha = -1: 1 - 1/V; bidirectional: 1/T (exchangeable); else NaN
  // readout law at position 0: one sample per (model, distinct first token)
  std::vector<double> readout0;  // the samples
  double readout0_mean = 0, readout0_ci95 = 0, readout0_pred_mean = 0;
  double q10 = 0, q50 = 0, q90 = 0, pred_q10 = 0, pred_q50 = 0, pred_q90 = 0;
  double ks = 0;                // sup |F_empirical - F_law| (0 for a point mass that every sample hits to 1e-12)
  double readout0_max_dev = 0;  // alpha = -1: max |r_0 - R| (rounding)
  // DESIGN.md metrics after block 0 and block 1 (mean over batches of the per-batch metric)
  double p0_norm_b0 = 0, p0_norm_pred = 0, p0_norm_ratio_b0 = 0, p0_cos_b0 = 0;
  double p0_norm_ratio_b1 = 0, p0_cos_b1 = 0;
  double sink_rate = 0, attn_to_0 = 0, attn_to_1 = 0;  // layer 1
  // per sequence (kept for tests): first two tokens, the margin
  std::vector<std::int32_t> first_tokens, second_tokens;
  std::vector<double> margins;
};

// Readout ties within this (relative to sqrt(d)) count as "not identified": a prefix of one
// repeated token gives h_t = h_0 up to rounding.
double identify_tol(int d);

CircuitResult run_circuit(const CircuitPoint& p, const CircuitOptions& o);

// Tidy CSV: one row per point and mask.
std::string circuit_csv_header();
std::string circuit_csv_row(const CircuitPoint& p, const CircuitOptions& o, const CircuitResult& r);
std::string circuit_table_header();
std::string circuit_table_row(const CircuitPoint& p, const CircuitResult& r);

}  // namespace p0sim::study
