// run_with_cache: one forward pass with every activation handed back by a TransformerLens hook name,
// and the probe metrics of such a pass.
// Each call runs a model of its own (a copy of the parameters, sized for the call's rows) whose
// buffers the returned arrays view without a copy, so a later call never changes an earlier cache;
// the buffers live as long as any array of the cache does.
#include <cmath>
#include <functional>
#include <limits>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "common/errors.hpp"
#include "python/bindings.hpp"
#include "sim/model_views.hpp"
#include "sim/probe_metrics.hpp"

namespace p0sim::python {
namespace {

using sim::Model;
using Index = Eigen::Index;
using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;

// One forward's model, kept alive by the arrays that view its buffers.
struct CacheRun {
  Model<float> model;
  int batch = 0;
  CacheRun(const sim::ModelConfig& c, int n) : model(c, n), batch(n) {}
};

// The call's model: the run's parameters at the call's sequence length (NoPE and RoPE models run
// on any length; learnt positions on at most the trained ones, whose first rows are used).
std::shared_ptr<CacheRun> cache_model(const PyModel& pm, int T, int N) {
  sim::ModelConfig c = pm.model->config();
  if (c.pos == sim::PosEnc::absolute && T > c.seq_len)
    throw UsageError("tokens", "at most " + std::to_string(c.seq_len) +
                                   " positions with learnt positions (pos=absolute), got " + std::to_string(T));
  c.seq_len = T;
  auto run = std::make_shared<CacheRun>(c, N);
  const auto& from = pm.model->params();
  for (const sim::TensorInfo& t : run->model.layout()) {
    const sim::TensorInfo& src = pm.model->tensor(t.name);
    run->model.params().segment(t.offset, t.size) = from.segment(src.offset, t.size);  // pos_emb: first rows
  }
  return run;
}

// The hook names wanted: names_filter None (all), a name, a list of names or a callable name -> bool.
std::function<bool(const std::string&)> name_filter(const py::object& f) {
  if (f.is_none()) return [](const std::string&) { return true; };
  if (py::isinstance<py::str>(f)) return [s = f.cast<std::string>()](const std::string& n) { return n == s; };
  if (PyCallable_Check(f.ptr())) return [f](const std::string& n) { return f(n).cast<bool>(); };
  return [names = f.cast<std::vector<std::string>>()](const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
}

class HookWriter {
 public:
  HookWriter(std::shared_ptr<CacheRun> run, py::dict& out, std::function<bool(const std::string&)> want)
      : base_(py::cast(run)), out_(out), want_(std::move(want)) {}
  bool wants(const std::string& name) const { return want_(name); }
  // A read-only view of the run's buffer: shape and strides in floats.
  void view(const std::string& name, const float* data, std::vector<py::ssize_t> shape,
            std::vector<py::ssize_t> strides) {
    if (!wants(name)) return;
    for (auto& s : strides) s *= static_cast<py::ssize_t>(sizeof(float));
    py::array_t<float> a(shape, strides, data, base_);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    out_[py::str(name)] = a;
  }
  // A computed hook: fill() writes the array (C order) in place.
  void computed(const std::string& name, std::vector<py::ssize_t> shape, const std::function<void(float*)>& fill) {
    if (!wants(name)) return;
    py::array_t<float> a(shape);
    fill(a.mutable_data());
    out_[py::str(name)] = a;
  }

 private:
  py::object base_;
  py::dict& out_;
  std::function<bool(const std::string&)> want_;
};

py::tuple run_with_cache(const PyModel& pm, const py::array& tokens_in, const py::object& names_filter) {
  if (tokens_in.dtype().kind() != 'i' && tokens_in.dtype().kind() != 'u')
    throw UsageError("tokens",
                     "integer token ids are accepted, got dtype " + py::str(tokens_in.dtype()).cast<std::string>());
  if (tokens_in.ndim() != 1 && tokens_in.ndim() != 2)
    throw UsageError(
        "tokens", "a (batch, pos) or (pos) array is accepted, got " + std::to_string(tokens_in.ndim()) + " dimensions");
  auto tokens = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(tokens_in);
  const int N = tokens.ndim() == 2 ? static_cast<int>(tokens.shape(0)) : 1;
  const int T = static_cast<int>(tokens.shape(tokens.ndim() - 1));
  const sim::ModelConfig& base = pm.model->config();
  if (N < 1) throw UsageError("tokens", "at least one row is accepted");
  if (T < 2) throw UsageError("tokens", "at least 2 positions are accepted, got " + std::to_string(T));
  std::vector<std::int32_t> rows(static_cast<std::size_t>(N) * (T + 1), 0);  // (N,T+1): inputs, a dummy target
  for (int n = 0; n < N; ++n)
    for (int t = 0; t < T; ++t) {
      const std::int64_t v = tokens.data()[static_cast<std::size_t>(n) * T + t];
      if (v < 0 || v >= base.vocab)
        throw UsageError("tokens", "ids in 0.." + std::to_string(base.vocab - 1) + " are accepted, got " +
                                       std::to_string(v) + " at (" + std::to_string(n) + ", " + std::to_string(t) +
                                       ")");
      rows[static_cast<std::size_t>(n) * (T + 1) + t] = static_cast<std::int32_t>(v);
    }
  const auto run = cache_model(pm, T, N);
  {
    py::gil_scoped_release released;
    run->model.forward(rows.data(), N);
  }
  Model<float>& model = run->model;
  const sim::ModelConfig& c = model.config();
  const py::ssize_t B = N, P = c.positions(), C = c.d_model, H = c.heads, D = c.head_dim(), F = c.d_ff, V = c.vocab,
                    L = c.layers;
  const bool prefix = c.mask == sim::Mask::prefix_bidirectional;
  py::dict cache;
  HookWriter w(run, cache, name_filter(names_filter));
  const std::vector<py::ssize_t> bpc{B, P, C}, bpc_strides{P * C, C, 1};
  const std::vector<py::ssize_t> bhpp{B, H, P, P}, bhpp_strides{H * P * P, P * P, P, 1};
  const auto& a = model.activation_views();
  const auto& p = model.param_views();
  const Index cols = static_cast<Index>(B * P);

  // Embeddings (position 0 is BOS, id V, with bos=true).
  w.computed("hook_embed", bpc, [&](float* out) {
    for (py::ssize_t n = 0; n < B; ++n)
      for (py::ssize_t t = 0; t < P; ++t) {
        const py::ssize_t tok = c.bos ? (t == 0 ? V : rows[n * (T + 1) + t - 1]) : rows[n * (T + 1) + t];
        Eigen::Map<Eigen::VectorXf>(out + (n * P + t) * C, C) = p.tok_emb.col(tok);
      }
  });
  if (c.pos == sim::PosEnc::absolute)
    w.computed("hook_pos_embed", bpc, [&](float* out) {
      for (py::ssize_t n = 0; n < B; ++n)
        for (py::ssize_t t = 0; t < P; ++t) Eigen::Map<Eigen::VectorXf>(out + (n * P + t) * C, C) = p.pos_emb.col(t);
    });

  for (py::ssize_t l = 0; l < L; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    w.view(b + "hook_resid_pre", model.hidden(static_cast<int>(l)), bpc, bpc_strides);
    w.view(b + "hook_resid_mid", model.hidden_mid(static_cast<int>(l)), bpc, bpc_strides);
    w.view(b + "hook_resid_post", model.hidden(static_cast<int>(l + 1)), bpc, bpc_strides);
    w.view(b + "attn.hook_pattern", model.attention(static_cast<int>(l)), bhpp, bhpp_strides);
    // With the prefix-bidirectional mask a position is read from its own pass over the prefix;
    // only the gathered residual stream and attention above exist per position.
    if (prefix) continue;
    const auto& blk = a.blocks[static_cast<std::size_t>(l)];
    const auto& wts = p.blocks[static_cast<std::size_t>(l)];
    auto norm_hooks = [&](const std::string& name, const auto& norm) {
      w.view(b + name + ".hook_normalized", norm.out.data(), bpc, bpc_strides);
      w.computed(b + name + ".hook_scale", {B, P, 1}, [&](float* out) {
        for (Index j = 0; j < cols; ++j) out[j] = 1.0f / norm.rstd[j];
      });
    };
    norm_hooks("ln1", blk.norm1);
    // q, k, v per token column: [q (C); k (C); v (C)], head h at rows h*D..h*D+D-1 of each.
    const std::vector<py::ssize_t> bphd{B, P, H, D}, qkv_strides{P * 3 * C, 3 * C, D, 1};
    w.view(b + "attn.hook_q", blk.qkv.data(), bphd, qkv_strides);
    w.view(b + "attn.hook_k", blk.qkv.data() + C, bphd, qkv_strides);
    w.view(b + "attn.hook_v", blk.qkv.data() + 2 * C, bphd, qkv_strides);
    // Scores as the attention kernel forms them, q.k / sqrt(D) (after RoPE), -inf where masked.
    w.computed(b + "attn.hook_attn_scores", bhpp, [&](float* out) {
      const float scale = 1.0f / std::sqrt(static_cast<float>(D));
      for (py::ssize_t n = 0; n < B; ++n)
        for (py::ssize_t h = 0; h < H; ++h)
          for (py::ssize_t i = 0; i < P; ++i)
            for (py::ssize_t j = 0; j < P; ++j) {
              float& s = out[((n * H + h) * P + i) * P + j];
              if (c.mask == sim::Mask::causal && j > i) {
                s = -std::numeric_limits<float>::infinity();
                continue;
              }
              const float* q = blk.qkv.data() + (n * P + i) * 3 * C + h * D;
              const float* k = blk.qkv.data() + (n * P + j) * 3 * C + C + h * D;
              float dot = 0.0f;
              for (py::ssize_t d = 0; d < D; ++d) dot += q[d] * k[d];
              s = dot * scale;
            }
    });
    w.view(b + "attn.hook_z", blk.atty.data(), bphd, {P * C, C, D, 1});
    w.computed(b + "hook_attn_out", bpc, [&](float* out) {
      Eigen::Map<MatrixF>(out, C, cols).noalias() = wts.attn.wo.transpose() * blk.atty.leftCols(cols);
    });
    norm_hooks("ln2", blk.norm2);
    // The forward keeps only the MLP's output activation (it reuses the pre-activation's buffer for
    // the backward), so hook_pre is the product again: w1 applied to ln2's output.
    w.computed(b + "mlp.hook_pre", {B, P, F}, [&](float* out) {
      Eigen::Map<MatrixF>(out, F, cols).noalias() = wts.mlp.w1.transpose() * blk.norm2.out.leftCols(cols);
    });
    w.view(b + "mlp.hook_post", blk.fch_act.data(), {B, P, F}, {P * F, F, 1});
    w.computed(b + "hook_mlp_out", bpc, [&](float* out) {
      Eigen::Map<MatrixF>(out, C, cols).noalias() = wts.mlp.w2.transpose() * blk.fch_act.leftCols(cols);
    });
  }
  if (!prefix) {
    w.view("ln_final.hook_normalized", a.norm_f.out.data(), bpc, bpc_strides);
    w.computed("ln_final.hook_scale", {B, P, 1}, [&](float* out) {
      for (Index j = 0; j < cols; ++j) out[j] = 1.0f / a.norm_f.rstd[j];
    });
  }
  py::array_t<float> logits({B, P, V}, {P * V * 4, V * 4, py::ssize_t{4}}, model.logits(), py::cast(run));
  py::detail::array_proxy(logits.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return py::make_tuple(logits, cache, py::cast(run));
}

// The probe metrics (trace.csv's per-layer columns and heads.csv's per-head ones) of a cache's pass.
py::dict probes(const std::shared_ptr<CacheRun>& run, const py::object& active_in, double sink_eps) {
  if (!(sink_eps >= 0.0 && sink_eps <= 1.0)) throw UsageError("--sink-eps", "must be in [0, 1]");
  const sim::ModelConfig& c = run->model.config();
  const int N = run->batch, P = c.positions(), L = c.layers, H = c.heads;
  if (N < 2) throw UsageError("cache", "the probe metrics need at least 2 rows (p0_cos is pairwise)");
  std::vector<char> active;
  if (!active_in.is_none()) {
    auto a = py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(active_in);
    if (!a || a.ndim() != 2 || a.shape(0) != N || a.shape(1) != P)
      throw UsageError("active", "a (batch, positions) = (" + std::to_string(N) + ", " + std::to_string(P) +
                                     ") bool array is accepted");
    active.assign(a.data(), a.data() + a.size());
  }
  std::vector<sim::LayerProbe> layers;
  for (int l = 0; l < L; ++l)
    layers.push_back(sim::probe_layer(run->model, l, active.empty() ? nullptr : &active, sink_eps));
  py::dict out;
  const auto& metrics = sim::layer_metrics();
  auto per_layer = [&](auto value) {
    py::array_t<double> v(L);
    for (int l = 0; l < L; ++l) v.mutable_data()[l] = value(layers[static_cast<std::size_t>(l)]);
    return v;
  };
  py::array_t<int> layer(L);
  for (int l = 0; l < L; ++l) layer.mutable_data()[l] = l;
  out["layer"] = layer;
  for (const sim::LayerMetric& m : metrics)
    if (m.mid) out[py::str(m.name)] = per_layer(m.value);
  for (const sim::LayerMetric& m : metrics)
    if (m.mid) out[py::str("mid_" + m.name)] = per_layer(m.mid);
  for (const sim::LayerMetric& m : metrics)
    if (!m.mid) out[py::str(m.name)] = per_layer(m.value);
  py::dict heads;
  for (const sim::HeadMetric& hm : sim::kHeadMetrics) {
    py::array_t<double> v({L, H});
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h)
        v.mutable_data()[l * H + h] = layers[static_cast<std::size_t>(l)].heads[static_cast<std::size_t>(h)].*hm.field;
    heads[hm.name] = v;
  }
  out["heads"] = heads;
  return out;
}

}  // namespace

void bind_cache(py::module_& m) {
  py::class_<CacheRun, std::shared_ptr<CacheRun>>(m, "_CacheRun",
                                                  "The model of one run_with_cache pass; owns the cache's buffers");
  m.def("_run_with_cache", &run_with_cache, py::arg("model"), py::arg("tokens"), py::arg("names_filter") = py::none());
  m.def("_probes", &probes, py::arg("run"), py::arg("active") = py::none(), py::arg("sink_eps") = 0.3);
}

}  // namespace p0sim::python
