#pragma once
// The Python module p0sim._core: the engine called in-process (no subprocess, no second copy of the
// model). A Model holds one run's options (the run-option table of study/run_options.hpp, the
// same names as the CLI's flags with '_' for '-') and the engine's model; the package p0sim
// (python/p0sim/) re-exports it and adds what is plain Python: the cache's dict and the PyTorch twin.
#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include "sim/model.hpp"
#include "sim/train.hpp"
#include "study/run_options.hpp"

namespace p0sim::python {

namespace py = pybind11;

// A file or directory the caller named is missing or unreadable: FileNotFoundError in Python.
struct MissingPath : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One run: its options, the engine model sized for its batch, and what its last training left.
struct PyModel {
  study::OptionValues options;
  study::RunSpec spec;
  std::unique_ptr<sim::Model<float>> model;
  int trained_steps = 0;  // steps of the last finished train() (0: the initial or loaded weights)

  explicit PyModel(study::OptionValues values);
};

// The options as text, checked against the run-option table: {"d_model": 64, "bos": True} sets
// --d-model 64 --bos true, with the CLI's message on a bad name or value.
study::OptionValues options_from_kwargs(const py::dict& kwargs, study::OptionValues base = {});

void bind_model(py::module_& m);   // model.cpp: Model, load, train, parameters, probe batch
void bind_cache(py::module_& m);   // cache.cpp: run_with_cache, probes
void bind_theory(py::module_& m);  // theory.cpp: the cone model and the hand-wired circuit

}  // namespace p0sim::python
