#pragma once
// Closed forms of the hand-wired P0-sink circuit (study/circuit.hpp wires it into the engine's
// model): position 0's readout after layer 0 and its law over the Gaussian embedding table, and
// what the circuit predicts for identification and for position 0's norm. They need no model:
// the circuit is given by d, T, V, alpha, beta, c and the RMSNorm's eps (circuit_law.cpp derives them).
#include <string>

namespace p0sim::theory {

// R = sqrt(d) beta / sqrt(beta^2 + d eps): position 0's readout when alpha = -1 (exactly h_0 = beta u).
double readout_at_p0_exact(int d, double beta, double norm_eps);

// The law of position 0's readout r_0 over the Gaussian embedding table.
// alpha = -1: a point mass at readout_at_p0_exact. Otherwise r_0 = sqrt(d) T / sqrt(T^2 + d - 1)
// with T ~ noncentral t(nu = d-1, delta = beta / |1 + alpha|) (eps neglected; see circuit_law.cpp).
struct ReadoutLaw {
  bool point_mass = false;
  double point = 0;  // point_mass only
  double nu = 0, delta = 0;
  int d = 0;
  double cdf(double r) const;
  double quantile(double p) const;
  double mean() const;       // by quadrature over the noncentral-t density
  std::string name() const;  // "point" or "noncentral_t"
};
ReadoutLaw readout_law(int d, double alpha, double beta, double norm_eps);

// The fraction of sequences whose position 0 has the unique largest readout, with V tokens drawn
// uniformly: causal, alpha = -1: 1 - 1/V; bidirectional: 1/T; NaN where there is no closed form.
double identified_prob(bool causal, double alpha, int V, int T);
// p0_norm after block 0: sqrt(beta^2 + c^2) exactly under the causal mask at alpha = -1, else NaN.
double p0_norm_after_block0(bool causal, double alpha, double beta, double c);

}  // namespace p0sim::theory
