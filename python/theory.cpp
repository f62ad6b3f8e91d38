// p0sim.theory: the cone model (closed forms and Monte Carlo) and the hand-wired circuit, returning
// the rows `p0sim theory cone` and `p0sim theory circuit` write, as CSV text the package turns
// into columns (python/p0sim/theory.py), so both read the same columns from one writer.
#include <sstream>

#include <pybind11/stl.h>

#include "common/enum_names.hpp"
#include "common/errors.hpp"
#include "python/bindings.hpp"
#include "study/circuit.hpp"
#include "theory/cone_report.hpp"

namespace p0sim::python {
namespace {

template <typename E>
E parse_name(const std::string& option, const std::string& name) {
  if (const auto e = parse_enum<E>(name)) return *e;
  throw UsageError(option, "one of " + enum_names_text<E>() + " is accepted, got '" + name + "'");
}

std::string cone_csv(const std::string& model, const std::string& mask, int d, int T, double theta, double mu,
                     double sigma, double m, int heads, std::int64_t trials, std::uint64_t seed, int threads,
                     const std::string& estimator) {
  theory::ConePoint p;
  p.model = parse_name<theory::ValueModel>("--model", model);
  p.mask = parse_name<theory::AttnMask>("--mask", mask);
  p.d = d;
  p.T = T;
  p.theta = theta;
  p.mu = mu;
  p.sigma = sigma;
  p.m = m;
  p.heads = heads;
  theory::validate(p);
  theory::McOptions mo;
  mo.estimator = parse_name<theory::McEstimator>("--estimator", estimator);
  theory::validate_estimator(p, mo.estimator);
  if (trials < 2) throw UsageError("--trials", "an integer >= 2 is accepted, got " + std::to_string(trials));
  if (threads < 1 || threads > 1024) throw UsageError("--threads", "an integer in 1..1024 is accepted");
  mo.trials = trials;
  mo.seed = seed;
  mo.threads = threads;
  std::vector<int> positions(static_cast<std::size_t>(T));
  for (int t = 0; t < T; ++t) positions[static_cast<std::size_t>(t)] = t;
  theory::McResult r;
  {
    py::gil_scoped_release released;
    r = theory::simulate(p, positions, mo);
  }
  std::ostringstream out;
  out << theory::cone_csv_header();
  theory::write_cone_csv_rows(out, p, r, trials, seed);
  return out.str();
}

py::tuple circuit(int d, int T, int vocab, int heads, double alpha, double beta, double c, double neuron_scale,
                  double sink_gain, const std::string& mask, int sequences, int models, std::uint64_t seed,
                  double sink_eps) {
  study::CircuitPoint p;
  p.d = d;
  p.T = T;
  p.vocab = vocab;
  p.heads = heads;
  p.alpha = alpha;
  p.beta = beta;
  p.c = c;
  p.neuron_scale = neuron_scale;
  p.sink_gain = sink_gain;
  p.mask = parse_name<sim::Mask>("--mask", mask);
  if (p.mask == sim::Mask::prefix_bidirectional)
    throw UsageError("--mask", "one of causal, bidirectional is accepted, got '" + mask + "'");
  study::validate(p);
  if (sequences < 2) throw UsageError("--sequences", "an integer >= 2 is accepted");
  if (models < 1) throw UsageError("--models", "an integer >= 1 is accepted");
  if (!(sink_eps >= 0.0 && sink_eps <= 1.0)) throw UsageError("--sink-eps", "a number in [0, 1] is accepted");
  study::CircuitOptions o;
  o.sequences = sequences;
  o.models = models;
  o.seed = seed;
  o.sink_eps = sink_eps;
  study::CircuitResult r;
  {
    py::gil_scoped_release released;
    r = study::run_circuit(p, o);
  }
  py::dict samples;
  samples["readout0"] = r.readout0;
  samples["margins"] = r.margins;
  samples["first_tokens"] = r.first_tokens;
  samples["second_tokens"] = r.second_tokens;
  return py::make_tuple(study::circuit_csv_header() + study::circuit_csv_row(p, o, r), samples);
}

}  // namespace

void bind_theory(py::module_& m) {
  const theory::ConePoint cp;
  m.def("_cone_csv", &cone_csv, py::arg("model") = enum_name(cp.model), py::arg("mask") = enum_name(cp.mask),
        py::arg("d") = cp.d, py::arg("T") = cp.T, py::arg("theta") = cp.theta, py::arg("mu") = cp.mu,
        py::arg("sigma") = cp.sigma, py::arg("m") = cp.m, py::arg("heads") = cp.heads,
        py::arg("trials") = theory::McOptions{}.trials, py::arg("seed") = theory::McOptions{}.seed,
        py::arg("threads") = 1, py::arg("estimator") = enum_name(theory::McOptions{}.estimator));
  const study::CircuitPoint ci;
  const study::CircuitOptions co;
  m.def("_circuit", &circuit, py::arg("d") = ci.d, py::arg("T") = ci.T, py::arg("vocab") = ci.vocab,
        py::arg("heads") = ci.heads, py::arg("alpha") = ci.alpha, py::arg("beta") = ci.beta, py::arg("c") = ci.c,
        py::arg("neuron_scale") = ci.neuron_scale, py::arg("sink_gain") = ci.sink_gain,
        py::arg("mask") = enum_name(ci.mask), py::arg("sequences") = co.sequences, py::arg("models") = co.models,
        py::arg("seed") = co.seed, py::arg("sink_eps") = co.sink_eps);
}

}  // namespace p0sim::python
