// p0sim.Model: a run's options and the engine's model; training with the CLI's bits; loading a
// run directory; the parameters by name.
#include <Python.h>

#include <filesystem>
#include <optional>
#include <stdexcept>

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "common/errors.hpp"
#include "common/files.hpp"
#include "python/bindings.hpp"
#include "sim/checkpoint.hpp"
#include "sim/probe_metrics.hpp"
#include "study/config_toml.hpp"
#include "study/warm_start.hpp"

namespace p0sim::python {
namespace {

namespace fs = std::filesystem;
using sim::Model;
using sim::ProbeRecord;

// A training call stopped by Ctrl-C (or any signal whose Python handler raised): the Python error
// is set again once the GIL is held, so the caller sees KeyboardInterrupt.
struct Interrupted {};

std::string text_of(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::str>(v) || py::isinstance<py::int_>(v)) return py::str(v).cast<std::string>();
  if (py::isinstance<py::float_>(v)) return py::repr(v).cast<std::string>();
  // os.PathLike (a corpus path)
  if (py::hasattr(v, "__fspath__")) return v.attr("__fspath__")().cast<std::string>();
  return py::str(v).cast<std::string>();
}

py::array_t<double> column(const std::vector<double>& v) { return py::array_t<double>(v.size(), v.data()); }
py::array_t<int> int_column(const std::vector<int>& v) { return py::array_t<int>(v.size(), v.data()); }

// trace.csv's columns (sim::write_trace_csv), one entry per (probe, layer), from the same metric table.
py::dict trace_columns(const std::vector<ProbeRecord>& trace) {
  const auto& metrics = sim::layer_metrics();
  std::vector<int> step, layer;
  std::vector<std::vector<double>> state(metrics.size()), mid(metrics.size());
  std::vector<double> loss, accuracy, first_accuracy;
  py::list stage;
  for (const ProbeRecord& r : trace)
    for (std::size_t l = 0; l < r.layers.size(); ++l) {
      step.push_back(r.step);
      layer.push_back(static_cast<int>(l));
      for (std::size_t i = 0; i < metrics.size(); ++i) {
        state[i].push_back(metrics[i].value(r.layers[l]));
        if (metrics[i].mid) mid[i].push_back(metrics[i].mid(r.layers[l]));
      }
      loss.push_back(r.loss);
      accuracy.push_back(r.accuracy);
      first_accuracy.push_back(r.first_accuracy);
      stage.append(r.stage);
    }
  py::dict out;
  out["step"] = int_column(step);
  out["layer"] = int_column(layer);
  for (std::size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i].mid) out[py::str(metrics[i].name)] = column(state[i]);
  for (std::size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i].mid) out[py::str("mid_" + metrics[i].name)] = column(mid[i]);
  for (std::size_t i = 0; i < metrics.size(); ++i)
    if (!metrics[i].mid) out[py::str(metrics[i].name)] = column(state[i]);
  out["loss"] = column(loss);
  out["accuracy"] = column(accuracy);
  out["first_accuracy"] = column(first_accuracy);
  out["stage"] = stage;
  return out;
}

// heads.csv's columns (sim::write_heads_csv), one entry per (probe, layer, head).
py::dict head_columns(const std::vector<ProbeRecord>& trace) {
  std::vector<int> step, layer, head;
  std::vector<std::vector<double>> values(sim::kHeadMetrics.size());
  for (const ProbeRecord& r : trace)
    for (std::size_t l = 0; l < r.layers.size(); ++l)
      for (std::size_t h = 0; h < r.layers[l].heads.size(); ++h) {
        step.push_back(r.step);
        layer.push_back(static_cast<int>(l));
        head.push_back(static_cast<int>(h));
        for (std::size_t i = 0; i < sim::kHeadMetrics.size(); ++i)
          values[i].push_back(r.layers[l].heads[h].*sim::kHeadMetrics[i].field);
      }
  py::dict out;
  out["step"] = int_column(step);
  out["layer"] = int_column(layer);
  out["head"] = int_column(head);
  for (std::size_t i = 0; i < sim::kHeadMetrics.size(); ++i) out[sim::kHeadMetrics[i].name] = column(values[i]);
  return out;
}

py::object step_or_none(const std::optional<int>& s) { return s ? py::object(py::int_(*s)) : py::object(py::none()); }

py::dict result_dict(const sim::TrainResult& r) {
  std::vector<int> step;
  std::vector<double> loss, lr, grad_norm;
  for (const sim::StepLog& s : r.log) {
    step.push_back(s.step);
    loss.push_back(s.loss);
    lr.push_back(s.lr);
    grad_norm.push_back(s.grad_norm);
  }
  py::dict log;
  log["step"] = int_column(step);
  log["loss"] = column(loss);
  log["lr"] = column(lr);
  log["grad_norm"] = column(grad_norm);
  py::dict out;
  out["log"] = log;
  out["final_loss"] = r.final_loss;
  out["wall_seconds"] = r.wall_seconds;
  out["tokens_per_s"] = r.tokens_per_s;
  out["entropy_floor"] = r.entropy_floor;
  out["trace"] = trace_columns(r.probes);
  out["heads"] = head_columns(r.probes);
  py::dict emergence;
  emergence["identification"] = step_or_none(r.emergence.identification);
  emergence["high_norm"] = step_or_none(r.emergence.high_norm);
  emergence["sink"] = step_or_none(r.emergence.sink);
  out["emergence"] = emergence;
  return out;
}

py::object json_to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// Trains the run as `p0sim train` does (the same engine call on the same configuration, so the same
// bits), optionally writing its run directory as the CLI writes it.
py::dict train(PyModel& pm, std::optional<int> steps, int threads, std::optional<std::string> out, bool force,
               const py::object& on_step) {
  if (steps) pm.options.set("steps", std::to_string(*steps), "--steps");
  pm.spec = pm.options.spec();
  sim::TrainConfig c = pm.spec.train;
  if (threads < 1 || threads > 1024)
    throw UsageError("--threads", "an integer in 1..1024 is accepted, got " + std::to_string(threads));
  c.threads = threads;
  sim::validate(c);
  fs::path dir;
  if (out) {
    dir = *out;
    std::error_code ec;
    if (!force && fs::is_directory(dir, ec) && !fs::is_empty(dir, ec))
      throw UsageError("--out", "'" + *out + "' is not empty (pass force=True to start the run over in it)");
    prepare_output_dir("--out", dir, force);
    fs::remove_all(sim::checkpoint_dir(dir), ec);
    write_file_atomic(dir / "config.toml", "# resolved configuration of 'p0sim train'; pass back with --config\n" +
                                               pm.options.toml(study::kEveryRun | study::kTrainOnly));
  }
  sim::TrainControl control;
  control.initialise = study::warm_start_initialiser(pm.spec);
  // Every step, with the GIL: a pending signal (Ctrl-C) stops the run after that step, and the
  // caller's on_step sees the step.
  control.on_step = [&on_step](const sim::StepLog& s) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw Interrupted{};
    if (!on_step.is_none()) {
      py::dict d;
      d["step"] = s.step;
      d["loss"] = s.loss;
      d["lr"] = s.lr;
      d["grad_norm"] = s.grad_norm;
      try {
        on_step(d);
      } catch (py::error_already_set& e) {
        e.restore();
        throw Interrupted{};
      }
    }
  };
  sim::TrainResult r;
  try {
    py::gil_scoped_release released;
    r = sim::train(*pm.model, c, control);
  } catch (const Interrupted&) {
    pm.trained_steps = 0;
    throw py::error_already_set();
  }
  pm.trained_steps = c.steps;
  if (out) {
    sim::write_run(dir, *pm.model, c, r);
    if (control.initialise)
      write_file_atomic(dir / "warm_start.json", study::warm_start_report(r.probes).dump(2) + "\n");
  }
  return result_dict(r);
}

std::unique_ptr<PyModel> load(const std::string& run_dir) {
  const fs::path run = run_dir;
  std::error_code ec;
  if (!fs::is_directory(run, ec)) throw MissingPath("run_dir: '" + run_dir + "' is not a directory");
  if (!fs::is_regular_file(run / "config.toml", ec))
    throw MissingPath("run_dir: '" + run_dir + "' is not a run directory (no config.toml)");
  if (!fs::is_directory(run / "weights", ec))
    throw MissingPath("run_dir: '" + run_dir + "' has no weights/ (the run has not finished)");
  study::OptionValues values;
  for (const study::TomlEntry& e : study::read_toml(run / "config.toml", "run_dir").root)
    values.set(e.key, e.text, e.where);
  auto pm = std::make_unique<PyModel>(values);
  const sim::LoadedWeights w = sim::load_weights(run / "weights", "run_dir");
  if (w.params.size() != static_cast<std::size_t>(pm->model->params().size()))
    throw UsageError("run_dir", "weights/ does not match the run's config.toml");
  pm->model->params() = Eigen::Map<const Eigen::VectorXf>(w.params.data(), static_cast<Eigen::Index>(w.params.size()));
  if (const auto s = values.get("steps"); !s.empty()) pm->trained_steps = std::stoi(s);
  return pm;
}

py::dict state_dict(const PyModel& pm) {
  py::dict out;
  const auto& params = pm.model->params();
  for (const sim::TensorInfo& t : pm.model->layout()) {
    std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
    py::array_t<float> a(shape);
    std::copy_n(params.data() + t.offset, t.size, a.mutable_data());
    out[py::str(t.name)] = a;
  }
  return out;
}

void load_state_dict(PyModel& pm, const py::dict& d) {
  for (const sim::TensorInfo& t : pm.model->layout()) {
    if (!d.contains(t.name)) throw UsageError("state_dict", "missing tensor '" + t.name + "'");
    auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(d[py::str(t.name)]);
    if (!a) throw UsageError("state_dict", "'" + t.name + "' is not a float array");
    std::vector<Eigen::Index> shape(a.shape(), a.shape() + a.ndim());
    if (shape != t.shape) throw UsageError("state_dict", "'" + t.name + "' has the wrong shape");
    std::copy_n(a.data(), t.size, pm.model->params().data() + t.offset);
  }
  for (const auto& item : d)
    if (!std::any_of(pm.model->layout().begin(), pm.model->layout().end(),
                     [&](const sim::TensorInfo& t) { return t.name == item.first.cast<std::string>(); }))
      throw UsageError("state_dict", "unknown tensor '" + item.first.cast<std::string>() + "'");
}

// The training run's probe batch: its token rows (N,T+1) and the task's active queries (N,P).
py::tuple probe_batch(const PyModel& pm) {
  const sim::TrainConfig& c = pm.spec.train;
  const sim::DataGenerator data(c.data);
  sim::Prober prober(c.model, data, c.probe);
  const int N = c.probe.batch, P = c.model.positions();
  py::array_t<std::int32_t> rows({N, c.model.seq_len + 1});
  std::copy(prober.rows().begin(), prober.rows().end(), rows.mutable_data());
  py::array_t<bool> active({N, P});
  std::transform(prober.active().begin(), prober.active().end(), active.mutable_data(), [](char a) { return a != 0; });
  return py::make_tuple(rows, active);
}

}  // namespace

PyModel::PyModel(study::OptionValues values) : options(std::move(values)), spec(options.spec()) {
  sim::validate(spec.train);
  model = std::make_unique<Model<float>>(spec.train.model, spec.train.batch);
  model->init(spec.train.seed, spec.train.init);
}

study::OptionValues options_from_kwargs(const py::dict& kwargs, study::OptionValues base) {
  for (const auto& [key, value] : kwargs) {
    std::string name = key.cast<std::string>();
    std::replace(name.begin(), name.end(), '_', '-');
    base.set(name, text_of(value), "--" + name);
  }
  return base;
}

void bind_model(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      PyErr_SetString(PyExc_ValueError, study::option_error(e).what());
    } catch (const UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::domain_error& e) {
      PyErr_SetString(PyExc_ValueError, (std::string("outside the model's domain: ") + e.what()).c_str());
    } catch (const MissingPath& e) {
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    } catch (const RunError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  py::class_<PyModel>(m, "Model", R"(A tiny causal transformer of the engine, described by run options.

Model(**options) takes the options of `p0sim train` with '_' for '-' (d_model=64, task="text",
bos=True, ...); an option not given takes the CLI's default. The weights are the seeded
initial ones until train() or load().)")
      .def(py::init([](py::kwargs kw) { return std::make_unique<PyModel>(options_from_kwargs(kw)); }))
      .def(
          "train",
          [](PyModel& pm, std::optional<int> steps, int threads, std::optional<std::string> out, bool force,
             py::object on_step) { return train(pm, steps, threads, out, force, on_step); },
          py::arg("steps") = py::none(), py::arg("threads") = 1, py::arg("out") = py::none(), py::arg("force") = false,
          py::arg("on_step") = py::none(),
          R"(Train from the seeded initial weights as `p0sim train` does: same options and seed, same bits.

steps overrides the run's step count; threads split each step's batch (the bits do not depend
on them); out writes the run directory the CLI writes (train.csv, trace.csv, heads.csv,
summary.json, weights/); on_step(dict) sees every step. The GIL is released while training;
Ctrl-C stops after the current step with KeyboardInterrupt, the model holding that step's
weights. Returns a dict: log (per step), trace and heads (trace.csv's and heads.csv's columns),
emergence steps, final_loss, tokens_per_s.)")
      .def_property_readonly(
          "options",
          [](const PyModel& pm) {
            py::dict d;
            for (const study::RunOption& o : study::run_options()) {
              std::string key = o.name;
              std::replace(key.begin(), key.end(), '-', '_');
              d[py::str(key)] = pm.options.get(o.name);
            }
            return d;
          },
          "Every run option's value as text, as the run's config.toml lists them")
      .def_property_readonly(
          "config", [](const PyModel& pm) { return json_to_python(sim::to_json(pm.spec.train)); },
          "The resolved training configuration (as summary.json's config)")
      .def_property_readonly(
          "toml", [](const PyModel& pm) { return pm.options.toml(study::kEveryRun | study::kTrainOnly); },
          "The run's options as a config.toml for `p0sim train --config`")
      .def_property_readonly(
          "trained_steps", [](const PyModel& pm) { return pm.trained_steps; },
          "Optimiser steps behind the weights (0 for the initial ones)")
      .def("state_dict", &state_dict, "Every parameter by name (DESIGN.md names, row-major shapes), as copies")
      .def("load_state_dict", &load_state_dict, py::arg("state_dict"),
           "Set every parameter from a dict of arrays named and shaped as state_dict() gives them")
      .def("probe_batch", &probe_batch,
           "The probe batch of the run's training (rows (N,T+1) int32, active query flags (N,P) bool)")
      .def("__repr__", [](const PyModel& pm) {
        const sim::ModelConfig& c = pm.spec.train.model;
        return "p0sim.Model(task='" + pm.options.get("task") + "', layers=" + std::to_string(c.layers) +
               ", d_model=" + std::to_string(c.d_model) + ", heads=" + std::to_string(c.heads) +
               ", seq_len=" + std::to_string(c.seq_len) + ", mask='" + pm.options.get("mask") + "', pos='" +
               pm.options.get("pos") + "', bos=" + (c.bos ? "True" : "False") +
               ", trained_steps=" + std::to_string(pm.trained_steps) + ")";
      });

  m.def("load", &load, py::arg("run_dir"),
        "The model of a finished run directory (`p0sim train --out`, or runs/<cell>/seed-<k>/ of a sweep or "
        "experiment): its options from config.toml, its weights from weights/");
}

}  // namespace p0sim::python
