// PYBIND11_MODULE entry of p0sim._core (declarations in python/bindings.hpp).
#include "common/engine_version.hpp"
#include "python/bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "p0sim's engine, in-process: models, training, activation caches, probes and theory";
  m.attr("engine_version") = p0sim::kEngineVersion;
  m.attr("__version__") = P0SIM_VERSION;
  p0sim::python::bind_model(m);
  p0sim::python::bind_cache(m);
  p0sim::python::bind_theory(m);
}
