#include "sim/train.hpp"

#include <chrono>
#include <limits>
#include <cmath>
#include <fstream>
#include <numbers>
#include <optional>
#include <sstream>

#include "common/engine_version.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/format.hpp"
#include "common/json_number.hpp"
#include "sim/corpus.hpp"
#include "sim/npy.hpp"
#include "sim/parallel_step.hpp"
#include "sim/plot_dump.hpp"

namespace p0sim::sim {
namespace fs = std::filesystem;

double learning_rate(const TrainConfig& c, int step) {
  if (step < c.warmup) return c.lr * static_cast<double>(step + 1) / static_cast<double>(c.warmup);
  if (c.schedule == Schedule::constant || c.steps <= c.warmup) return c.lr;
  const double progress = static_cast<double>(step - c.warmup) / static_cast<double>(c.steps - c.warmup);
  return c.lr * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

namespace {

template <typename Ptr>
bool all_finite(Ptr data, Eigen::Index n) {
  return Eigen::Map<const Eigen::VectorXf>(data, n).allFinite();
}

}  // namespace

std::string locate_non_finite(const Model<float>& model, bool gradients_too) {
  const ModelConfig& c = model.config();
  const auto params = model.params();
  for (const TensorInfo& t : model.layout())
    if (!all_finite(params.data() + t.offset, t.size)) return "parameter " + t.name;
  const Eigen::Index B = model.last_batch(), P = c.positions(), C = c.d_model, H = c.heads, V = c.vocab;
  if (B > 0) {
    if (!all_finite(model.hidden(0), B * P * C)) return "activation of the embedding (tok_emb output)";
    for (int l = 0; l < c.layers; ++l) {
      const std::string block = "blocks." + std::to_string(l);
      if (!all_finite(model.attention(l), B * H * P * P)) return "activation of " + block + ".attn (attention weights)";
      if (!all_finite(model.hidden_mid(l), B * P * C))
        return "activation of " + block + ".attn (residual after attention)";
      if (!all_finite(model.hidden(l + 1), B * P * C)) return "activation of " + block + ".mlp (block output)";
    }
    if (!all_finite(model.logits(), B * P * V)) return "activation of lm_head (logits)";
  }
  if (gradients_too) {
    // Backward runs from the loss to the embedding, so the last tensor of the layout is reached first.
    const auto grads = model.grads();
    const auto& layout = model.layout();
    for (auto t = layout.rbegin(); t != layout.rend(); ++t)
      if (!all_finite(grads.data() + t->offset, t->size)) return "gradient of " + t->name;
  }
  return "";
}

TrainResult train(Model<float>& model, const TrainConfig& c, const std::function<void(const StepLog&)>& on_step) {
  TrainControl control;
  control.on_step = on_step;
  return train(model, c, control);
}

TrainResult train(Model<float>& model, const TrainConfig& c, const TrainControl& control) {
  validate(c);
  if (model.max_batch() < c.batch) throw ConfigError("batch", "larger than the model was built for");
  DataConfig data = c.data;
  data.seed = c.seed;  // one seed drives init, task structure and batches
  const DataGenerator gen(data);
  const int B = c.batch, T = c.model.seq_len;
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B) * gen.row_length());  // (B,T+1)

  if (control.initialise && !control.resume)
    control.initialise(model);
  else
    model.init(c.seed, c.init);
  Optimizer<float> opt(model.layout(), c.optim);
  TrainResult result;
  result.entropy_floor = gen.entropy_floor(c.model.bos);
  result.log.reserve(static_cast<std::size_t>(c.steps));
  int first_step = 0;
  double earlier_seconds = 0.0;  // wall time of the sessions before a resume
  if (const TrainState* st = control.resume) {
    const auto n = model.params().size();
    if (static_cast<Eigen::Index>(st->params.size()) != n || static_cast<Eigen::Index>(st->adam_m.size()) != n ||
        static_cast<Eigen::Index>(st->adam_v.size()) != n)
      throw RunError("checkpoint holds " + std::to_string(st->params.size()) + " parameters, the model has " +
                     std::to_string(n));
    model.params() = Eigen::Map<const Eigen::VectorXf>(st->params.data(), n);
    opt.first_moment() = Eigen::Map<const Eigen::VectorXf>(st->adam_m.data(), n);
    opt.second_moment() = Eigen::Map<const Eigen::VectorXf>(st->adam_v.data(), n);
    opt.set_steps(st->adam_steps);
    result.log = st->log;
    result.probes = st->probes;
    first_step = st->step;
    earlier_seconds = st->wall_seconds;
    // A finished run extended to more steps took a probe at its old end; unless that end was on the
    // --probe-every grid, a run given the longer --steps from the start has no probe there.
    if (c.probe.every > 0 && first_step < c.steps && first_step % c.probe.every != 0 && !result.probes.empty() &&
        result.probes.back().step == first_step)
      result.probes.pop_back();
  }
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const double tokens_per_step = static_cast<double>(B) * T;
  // The probe runs its own model on its own batch and only reads the parameters, so a run with
  // probes trains exactly the weights of a run without.
  std::optional<Prober> prober;
  if (c.probe.every > 0) {
    prober.emplace(c.model, gen, c.probe);
    if (first_step == 0 && result.probes.empty()) result.probes.push_back(prober->probe(model, 0));
    // Resumed at its last step (the checkpoint of a run that is now given exactly that many steps,
    // after it was started with more): the loop below will not run, so take the end probe here.
    if (first_step > 0 && first_step == c.steps && (result.probes.empty() || result.probes.back().step != c.steps))
      result.probes.push_back(prober->probe(model, c.steps));
  }

  const bool checkpointing = control.save_checkpoint && (control.checkpoint_every > 0 || control.checkpoint_at_end);
  int last_checkpoint = control.resume ? first_step : -1;
  auto save = [&](int finished) {
    TrainState st;
    st.step = finished;
    const auto p = model.params();
    st.params.assign(p.data(), p.data() + p.size());
    st.adam_m.assign(opt.first_moment().data(), opt.first_moment().data() + p.size());
    st.adam_v.assign(opt.second_moment().data(), opt.second_moment().data() + p.size());
    st.adam_steps = opt.steps();
    st.log = result.log;
    st.probes = result.probes;
    st.wall_seconds = earlier_seconds + std::chrono::duration<double>(clock::now() - start).count();
    control.save_checkpoint(st);
    last_checkpoint = finished;
  };
  auto diverged = [&](int step, double loss, double grad_norm) {
    std::string where = locate_non_finite(model, std::isfinite(loss));
    std::string last = last_checkpoint < 0
                           ? std::string("no checkpoint was written (checkpoints were off)")
                           : "last good checkpoint: step " + std::to_string(last_checkpoint) +
                                 (control.checkpoint_location.empty() ? "" : " in " + control.checkpoint_location);
    return RunError("training diverged at step " + std::to_string(step) + ": loss " + fmt17(loss) + ", gradient norm " +
                    fmt17(grad_norm) + (where.empty() ? "" : "; first non-finite value in the " + where) + "; " + last +
                    " (try a lower learning rate or a gradient-norm clip)");
  };

  ParallelStep step(c.model, B, c.threads, 0,
                    control.exchange);  // the batch split across c.threads (bit-identical for any)
  for (int s = first_step; s < c.steps; ++s) {
    const auto t0 = clock::now();
    gen.fill(0, static_cast<std::uint64_t>(s), B, rows.data());
    const double loss = step.forward_backward(model, rows.data());  // grads overwritten
    if (!std::isfinite(loss)) {
      // The chunked step keeps its activations in per-chunk replicas: rerun the batch on the
      // model itself so the message can name the first non-finite activation.
      model.forward(rows.data(), B);
      throw diverged(s + 1, loss, std::nan(""));
    }
    auto g = model.grads();
    // Float accumulation vectorises (a double cast cost ~5% of a small step); its rounding is
    // far below what clipping cares about. Only if it overflows is the double sum needed.
    double grad_norm = std::sqrt(static_cast<double>(g.squaredNorm()));
    if (!std::isfinite(grad_norm)) grad_norm = std::sqrt(g.template cast<double>().squaredNorm());
    if (!std::isfinite(grad_norm)) throw diverged(s + 1, loss, grad_norm);
    if (c.clip > 0.0 && grad_norm > c.clip) g *= static_cast<float>(c.clip / grad_norm);
    const double lr = learning_rate(c, s);
    opt.step(model.params(), model.grads(), lr);
    const double dt = std::chrono::duration<double>(clock::now() - t0).count();
    StepLog entry{s + 1, loss, lr, grad_norm, dt > 0.0 ? tokens_per_step / dt : 0.0};
    result.log.push_back(entry);
    if (control.on_step) control.on_step(entry);
    if (prober && ((s + 1) % c.probe.every == 0 || s + 1 == c.steps))
      result.probes.push_back(prober->probe(model, s + 1));
    if (checkpointing && control.checkpoint_every > 0 && (s + 1) % control.checkpoint_every == 0 && s + 1 < c.steps)
      save(s + 1);
  }
  if (checkpointing && last_checkpoint != c.steps) save(c.steps);
  if (prober) result.emergence = analyse_trace(result.probes, c.probe, c.data.task);
  if (prober && c.ablate) result.ablations = run_ablations(model, *prober);
  result.wall_seconds = earlier_seconds + std::chrono::duration<double>(clock::now() - start).count();
  result.final_loss = result.log.empty() ? std::nan("") : result.log.back().loss;
  result.tokens_per_s = result.wall_seconds > 0.0 ? tokens_per_step * c.steps / result.wall_seconds : 0.0;
  return result;
}

nlohmann::json to_json(const ModelConfig& c) {
  return {{"vocab", c.vocab},        {"d_model", c.d_model}, {"heads", c.heads},          {"layers", c.layers},
          {"d_ff", c.d_ff},          {"seq_len", c.seq_len}, {"mask", enum_name(c.mask)}, {"attn", enum_name(c.attn)},
          {"pos", enum_name(c.pos)}, {"bos", c.bos},         {"norm", enum_name(c.norm)}, {"act", enum_name(c.act)}};
}

nlohmann::json to_json(const TrainConfig& c) {
  nlohmann::json j = to_json(c.model);
  j.update(to_json(c.data));
  j["probe_every"] = c.probe.every;
  j["probe_batch"] = c.probe.batch;
  j["ablate"] = c.ablate;
  j["batch"] = c.batch;
  j["steps"] = c.steps;
  j["lr"] = c.lr;
  j["warmup"] = c.warmup;
  j["schedule"] = enum_name(c.schedule);
  j["init"] = enum_name(c.init);
  j["optimizer"] = enum_name(c.optim.kind);
  j["weight_decay"] = c.optim.weight_decay;
  j["weight_decay_group"] = enum_name(c.optim.decay_group);
  j["momentum"] = c.optim.momentum;
  j["beta1"] = c.optim.beta1;
  j["beta2"] = c.optim.beta2;
  j["eps"] = c.optim.eps;
  j["clip"] = c.clip;
  j["seed"] = c.seed;
  j["threads"] = c.threads;
  return j;
}

namespace {

template <NamedEnum E>
E enum_from(const nlohmann::json& j, const char* key, const std::string& option) {
  const std::string s = j.at(key).get<std::string>();
  if (const auto e = parse_enum<E>(s)) return *e;
  throw UsageError(option, std::string("config.json: unknown ") + key + " '" + s + "'");
}

std::string shape_str(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ")";
}

}  // namespace

ModelConfig model_config_from_json(const nlohmann::json& j, const std::string& option) {
  ModelConfig c;
  try {
    c.vocab = j.at("vocab").get<int>();
    c.d_model = j.at("d_model").get<int>();
    c.heads = j.at("heads").get<int>();
    c.layers = j.at("layers").get<int>();
    c.d_ff = j.at("d_ff").get<int>();
    c.seq_len = j.at("seq_len").get<int>();
    c.bos = j.at("bos").get<bool>();
    c.mask = enum_from<Mask>(j, "mask", option);
    c.attn = enum_from<Attn>(j, "attn", option);
    c.pos = enum_from<PosEnc>(j, "pos", option);
    c.norm = enum_from<Norm>(j, "norm", option);
    c.act = enum_from<Act>(j, "act", option);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(option, std::string("config.json: ") + e.what());
  }
  try {
    validate(c);
  } catch (const UsageError& e) {
    throw UsageError(option, std::string("config.json describes an invalid model: ") + e.what());
  }
  return c;
}

void write_weights(const fs::path& weights_dir, const Model<float>& model) {
  std::error_code ec;
  fs::create_directories(weights_dir, ec);
  if (ec) throw RunError("cannot create " + weights_dir.string() + ": " + ec.message());
  const auto params = model.params();
  for (const TensorInfo& t : model.layout()) {
    std::vector<std::int64_t> shape(t.shape.begin(), t.shape.end());
    write_npy(weights_dir / (t.name + ".npy"), params.data() + t.offset, shape);
  }
  write_file_atomic(weights_dir / "config.json", to_json(model.config()).dump(2) + "\n");
}

nlohmann::json text_summary(const TrainConfig& c, const TrainResult& r) {
  if (c.data.task != Task::text) return nullptr;
  const DataGenerator gen(c.data);
  double unigram = 0.0;
  for (double p : gen.marginal())
    if (p > 0) unigram -= p * std::log2(p);
  const auto corpus = load_corpus(c.data.corpus, static_cast<std::size_t>(gen.row_length()));
  const double heldout =
      r.probes.empty() ? std::numeric_limits<double>::quiet_NaN() : r.probes.back().loss / std::numbers::ln2;
  return {{"heldout_bits_per_byte", json_number(heldout)}, {"unigram_bits_per_byte", unigram},
          {"train_bytes", corpus->train.bytes.size()},     {"train_documents", corpus->train.starts.size()},
          {"heldout_bytes", corpus->heldout.bytes.size()}, {"heldout_documents", corpus->heldout.starts.size()}};
}

void write_run(const fs::path& dir, const Model<float>& model, const TrainConfig& c, const TrainResult& r) {
  {
    AtomicFile csv(dir / "train.csv");
    csv.stream() << "step,loss,lr,grad_norm,tokens_per_s\n";
    for (const StepLog& e : r.log)
      csv.stream() << e.step << ',' << fmt17(e.loss) << ',' << fmt17(e.lr) << ',' << fmt17(e.grad_norm) << ','
                   << fmt17(e.tokens_per_s) << '\n';
    csv.commit();
  }
  nlohmann::json s;
  s["engine_version"] = kEngineVersion;
  s["config"] = to_json(c);
  s["steps"] = c.steps;
  s["final_loss"] = std::isfinite(r.final_loss) ? nlohmann::json(r.final_loss) : nlohmann::json(nullptr);
  s["entropy_floor"] = std::isfinite(r.entropy_floor) ? nlohmann::json(r.entropy_floor) : nlohmann::json(nullptr);
  s["tokens_per_s"] = r.tokens_per_s;
  s["wall_seconds"] = r.wall_seconds;
  s["parameters"] = model.params().size();
  if (c.data.task == Task::text) s["text"] = text_summary(c, r);
  if (!r.ablations.empty())
    write_file_atomic(dir / "ablations.csv", ablations_csv(r.ablations));
  else
    fs::remove(dir / "ablations.csv");  // an extended run's old ablations describe its shorter model
  if (!r.probes.empty()) {
    write_trace_csv(dir / "trace.csv", r.probes);
    write_heads_csv(dir / "heads.csv", r.probes);
    s["probe"] = probe_summary(r.probes, r.emergence, c.probe, c.model.bos);
    // The task's accuracy at the last probe: at its active queries (triggers, lookup queries); the
    // mixture scores its lookup queries apart from its triggers.
    const ProbeRecord& last = r.probes.back();
    const Task task = c.data.task;
    if (last.scored > 0) s["task_accuracy"] = json_number(last.accuracy);
    if (recalls_position0(task)) s["first_trigger_accuracy"] = json_number(last.first_accuracy);
    if (task == Task::firstrecall_lookup) s["lookup_accuracy"] = json_number(last.query_accuracy);
    // For `p0sim plot`: each head's mean attention pattern and the norm by position at the end.
    write_probe_dump(dir / "probe", model, c);
  }
  write_weights(dir / "weights", model);
  write_file_atomic(dir / "summary.json", s.dump(2) + "\n");
}

LoadedWeights load_weights(const fs::path& weights_dir, const std::string& option, int seq_len) {
  const fs::path cfg_path = weights_dir / "config.json";
  std::ifstream in(cfg_path);
  if (!fs::is_directory(weights_dir)) throw UsageError(option, "'" + weights_dir.string() + "' is not a directory");
  if (!in) throw UsageError(option, "cannot read '" + cfg_path.string() + "'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(option, "'" + cfg_path.string() + "' is not valid JSON: " + e.what());
  }
  LoadedWeights w;
  w.config = model_config_from_json(j, option);
  if (seq_len > 0 && seq_len != w.config.seq_len) {
    if (w.config.pos == PosEnc::absolute)
      throw ConfigError("seq_len",
                        "rows hold T=" + std::to_string(seq_len) +
                            " inputs but the model's absolute positions are for T=" + std::to_string(w.config.seq_len));
    w.config.seq_len = seq_len;
  }
  const auto layout = parameter_layout(w.config);
  Eigen::Index total = 0;
  for (const auto& t : layout) total = std::max(total, t.offset + t.size);
  w.params.assign(static_cast<std::size_t>(total), 0.0f);
  for (const TensorInfo& t : layout) {
    const fs::path p = weights_dir / (t.name + ".npy");
    if (!fs::exists(p)) throw UsageError(option, "missing tensor file '" + p.string() + "'");
    NpyArray a;
    try {
      a = read_npy(p);
    } catch (const UsageError& e) {
      throw UsageError(option, e.what());
    }
    const std::vector<std::int64_t> want(t.shape.begin(), t.shape.end());
    if (a.shape != want)
      throw UsageError(option,
                       "'" + p.string() + "' has shape " + shape_str(a.shape) + ", expected " + shape_str(want));
    if (a.dtype != "<f4" && a.dtype != "<f8")
      throw UsageError(option, "'" + p.string() + "' has dtype " + a.dtype + ", expected <f4 (or <f8)");
    const auto v = a.as_float();
    for (float x : v)
      if (!std::isfinite(x)) throw UsageError(option, "'" + p.string() + "' holds a non-finite value");
    std::copy(v.begin(), v.end(), w.params.begin() + t.offset);
  }
  return w;
}

EvalResult evaluate(Model<float>& model, const std::int32_t* rows, std::int64_t n_rows, bool with_grads) {
  const ModelConfig& c = model.config();
  const std::int64_t P = c.positions(), V = c.vocab, C = c.d_model, H = c.heads, L = c.layers;
  const std::int64_t N = n_rows, row_len = c.seq_len + 1;
  EvalResult r;
  r.logits.resize(static_cast<std::size_t>(N * P * V));
  r.hidden.resize(static_cast<std::size_t>((L + 1) * N * P * C));
  r.attention.resize(static_cast<std::size_t>(L * N * H * P * P));
  Eigen::VectorXd grad_sum;
  if (with_grads) grad_sum = Eigen::VectorXd::Zero(model.grads().size());
  double loss = 0.0;
  for (std::int64_t n0 = 0; n0 < N; n0 += model.max_batch()) {
    const int b = static_cast<int>(std::min<std::int64_t>(model.max_batch(), N - n0));
    // The mean over all N*P predictions is the chunk means weighted by b/N (each chunk has b*P).
    const double weight = static_cast<double>(b) / static_cast<double>(N);
    loss += weight * static_cast<double>(model.forward(rows + n0 * row_len, b));
    std::copy_n(model.logits(), b * P * V, r.logits.begin() + n0 * P * V);  // (b,P,V)
    for (std::int64_t l = 0; l <= L; ++l)
      std::copy_n(model.hidden(static_cast<int>(l)), b * P * C, r.hidden.begin() + (l * N + n0) * P * C);  // (b,P,C)
    for (std::int64_t l = 0; l < L; ++l)
      std::copy_n(model.attention(static_cast<int>(l)), b * H * P * P,
                  r.attention.begin() + (l * N + n0) * H * P * P);  // (b,H,P,P)
    if (with_grads) {
      model.zero_grad();
      model.backward();
      grad_sum += weight * model.grads().template cast<double>();
    }
  }
  r.loss = loss;
  if (with_grads) {
    r.grads.resize(static_cast<std::size_t>(grad_sum.size()));
    Eigen::Map<Eigen::VectorXf>(r.grads.data(), grad_sum.size()) = grad_sum.cast<float>();
  }
  return r;
}

}  // namespace p0sim::sim
