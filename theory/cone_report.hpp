#pragma once
// Output of `p0sim theory cone`: the tidy CSV (one row per point, position and quantity) and the
// compact gap table printed to stdout.
#include <cstdint>
#include <ostream>
#include <string>

#include "theory/cone.hpp"
#include "theory/cone_mc.hpp"

namespace p0sim::theory {

// Exactly: model,mask,d,T,t,theta,mu,sigma,m,heads,quantity,closed_form,mc_mean,mc_ci99_low,
// mc_ci99_high,z,trials,seed (with a trailing newline).
std::string cone_csv_header();

// Rows of one simulated point: for each requested t the quantities norm_sq_mean .. p0_beats_t_prob,
// then p0_largest_prob (Monte Carlo) and p0_largest_union_bound (closed form) once, at t = T-1.
// Parameters the model does not use, closed_form and z where no closed form exists, and the
// Monte-Carlo columns of the union bound are empty. The 99% interval is Student-t for means and
// exact Clopper-Pearson for the proportions (p0_beats_t_prob, p0_largest_prob). z = (mc_mean - closed_form) /
// std_error, where for probabilities std_error = sqrt(cf (1 - cf) / trials) (score test: the sample's is 0 when all
// trials agree), and std_error is floored at 1e-12 of the quantity's scale (double rounding).
void write_cone_csv_rows(std::ostream& out, const ConePoint& p, const McResult& mc, std::int64_t trials,
                         std::uint64_t seed);

// The table: a header, then per point one line per shown position (1 and T-1 where requested):
// gap and P(||o_0|| > ||o_t||) in closed form and by Monte Carlo, P(position 0 largest), and the
// largest |z| over all the point's estimates.
std::string cone_table_header();
std::string cone_table_rows(const ConePoint& p, const McResult& mc);

}  // namespace p0sim::theory
