// The hand-wired circuit: its weights, and its run in the engine's forward with the statistics
// compared against the closed forms of theory/circuit_law.hpp.
// Legend: N sequences, T positions, C = d, H heads, D = C/H, V vocab, F = 1 MLP neuron.
//
// Why alpha = -1 makes h_0 = beta u exactly. Layer 0 has Wq = Wk = 0, so every score is 0 and the
// causal softmax is uniform: position t averages the values of positions 0..t, position 0 gets
// its own value only. RMSNorm with gain 1 maps e_j to rho_j e_j, rho_j = 1/sqrt(|e_j|^2/C + eps),
// and Wv is solved so that Wv rho_j e_j = alpha e_j + beta u for every token j (exact on the span
// of the V <= C-2 linearly independent embeddings: Wv = (alpha E + beta u 1^T) pinv(E diag(rho)));
// Wo = I. So after the attention sublayer h_0 = (1 + alpha) e_{x_0} + beta u: beta u whatever the
// first token when alpha = -1. Its readout R, why competitors tie with it only after a repeated
// token, and the readout's law for alpha != -1: theory/circuit_law.cpp.
//
// Why no hard threshold. The engine's MLP has no bias, and RMSNorm multiplies h by a positive
// scalar, so a neuron's pre-activation is (scalar > 0) x f(h) with f linear: its sign is sign f(h).
// At alpha = -1, f(h_0) = beta f(u) while at t = 1 with tokens (i, j), f(h_1) = beta f(u) +/-
// (f(e_j) - f(e_i))/2 for the two orders, so f(h_0) > 0 > f(h_1) for both orders is impossible.
// The neuron writes c s_t w with s_t = gelu(a r_t)/gelu(a R): s_0 = 1 at alpha = -1, and s_t < 1
// for competitors because r_t < R and gelu is increasing there.
//
// After block 0 at alpha = -1: h_0 = beta u + c w (w orthogonal to u), so p0_norm = sqrt(beta^2 + c^2)
// exactly and p0_cos = 1 exactly; h_t = tau_t + beta u + c s_t w.
// Layer 1: score(t,k) = G <n_t,w> <n_k,w> / C with n = RMSNorm(h). <n_0,w>/sqrt(C) = c/sqrt(beta^2+c^2)
// is the largest possible w-share, so every query with <n_t,w> > 0 puts the most weight on key 0,
// and with G large nearly all of it.
#include "study/circuit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <sstream>

#include "common/errors.hpp"
#include "common/format.hpp"
#include "common/rng.hpp"
#include "common/stats.hpp"
#include "sim/layers.hpp"
#include "sim/probes.hpp"

namespace p0sim::study {

using Eigen::Index;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace {

// The engine's activation (layers.hpp: gelu, tanh approximation), in double.
double gelu_tanh(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

bool finite(double v) { return std::isfinite(v); }

// Empirical quantile, linear interpolation between order statistics (type 7).
double empirical_quantile(const std::vector<double>& sorted, double p) {
  const double h = (static_cast<double>(sorted.size()) - 1.0) * p;
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::string point_key(const CircuitPoint& p) {
  // The mask is left out on purpose: both masks run the same weights on the same tokens.
  return "circuit d=" + std::to_string(p.d) + " T=" + std::to_string(p.T) + " V=" + std::to_string(p.vocab_size()) +
         " H=" + std::to_string(p.heads) + " alpha=" + fmt17(p.alpha) + " beta=" + fmt17(p.beta) + " c=" + fmt17(p.c) +
         " a=" + fmt17(p.neuron_scale) + " G=" + fmt17(p.sink_gain);
}

}  // namespace

double identify_tol(int d) { return 1e-9 * std::sqrt(static_cast<double>(d)); }

void validate(const CircuitPoint& p) {
  if (p.d < 4 || p.d > 4096) throw UsageError("--d", "must be in 4..4096, got " + std::to_string(p.d));
  if (p.T < 2 || p.T > 4096) throw UsageError("--T", "must be in 2..4096, got " + std::to_string(p.T));
  if (p.heads < 1 || p.d % p.heads != 0)
    throw UsageError("--heads",
                     "must divide every --d, got " + std::to_string(p.heads) + " for d = " + std::to_string(p.d));
  const int V = p.vocab_size();
  if (V < 2 || V > p.d - 2)
    throw UsageError("--vocab", "must be in 2..d-2 (u and w need two directions outside the embeddings' span), got " +
                                    std::to_string(V) + " for d = " + std::to_string(p.d));
  if (!finite(p.alpha)) throw UsageError("--alpha", "must be finite");
  if (!finite(p.beta) || !(p.beta > 0)) throw UsageError("--beta", "must be finite and > 0, got " + fmt17(p.beta));
  if (!finite(p.c) || p.c < 0) throw UsageError("--c", "must be finite and >= 0, got " + fmt17(p.c));
  if (!finite(p.neuron_scale) || !(p.neuron_scale > 0))
    throw UsageError("--neuron-scale", "must be finite and > 0, got " + fmt17(p.neuron_scale));
  if (!finite(p.sink_gain) || p.sink_gain < 0) throw UsageError("--sink-gain", "must be finite and >= 0");
  if (p.mask == sim::Mask::prefix_bidirectional) throw UsageError("--mask", "accepted: causal, bidirectional");
}

sim::ModelConfig circuit_model_config(const CircuitPoint& p) {
  sim::ModelConfig c;
  c.vocab = p.vocab_size();
  c.d_model = p.d;
  c.heads = p.heads;
  c.layers = 2;
  c.d_ff = 1;  // one neuron
  c.seq_len = p.T;
  c.mask = p.mask;
  c.attn = sim::Attn::softmax;
  c.pos = sim::PosEnc::none;
  c.bos = false;
  c.norm = sim::Norm::rms;
  c.act = sim::Act::gelu;
  return c;
}

void wire_circuit(sim::Model<double>& model, const CircuitPoint& p, std::uint64_t seed) {
  validate(p);
  const Index C = p.d, V = p.vocab_size(), H = p.heads, D = C / H;
  auto params = model.params();
  params.setZero();
  auto view = [&](const std::string& name) {
    const auto& t = model.tensor(name);
    const Index rows = t.shape[0], cols = t.shape.size() > 1 ? t.shape[1] : 1;
    return Eigen::Map<RowMatrix>(params.data() + t.offset, rows, cols);
  };
  for (const auto& t : model.layout())
    if (t.name.ends_with("norm1.weight") || t.name.ends_with("norm2.weight") || t.name == "norm_f.weight")
      view(t.name).setOnes();

  PhiloxStream rng(seed, 0);
  Eigen::MatrixXd E(C, V);  // (C,V) column j = e_j ~ N(0, I_C)
  for (Index j = 0; j < V; ++j)
    for (Index i = 0; i < C; ++i) E(i, j) = rng.normal();
  view("tok_emb") = E.transpose();  // (V,C)

  const Eigen::VectorXd u = Eigen::VectorXd::Unit(C, C - 1);
  Eigen::VectorXd rho(V);  // norm1 scale of each embedding: norm1(e_j) = rho_j e_j
  for (Index j = 0; j < V; ++j)
    rho(j) = 1.0 / std::sqrt(E.col(j).squaredNorm() / static_cast<double>(C) + sim::layers::norm_eps);
  const Eigen::MatrixXd normed = E * rho.asDiagonal();                                    // (C,V)
  const Eigen::MatrixXd wanted = p.alpha * E + p.beta * u * Eigen::RowVectorXd::Ones(V);  // (C,V)
  const Eigen::MatrixXd pinv = normed.completeOrthogonalDecomposition().pseudoInverse();  // (V,C)
  Eigen::MatrixXd wv(C, C);
  wv.noalias() = wanted * pinv;
  view("blocks.0.attn.wv") = wv;  // (out,in): v = Wv x
  view("blocks.0.attn.wo").setIdentity();

  // w: orthogonal to u and to every embedding (the (V+2)-th column of Q in a QR of [E u]).
  Eigen::MatrixXd A(C, V + 1);
  A << E, u;
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(A);
  const Eigen::VectorXd w = qr.householderQ() * Eigen::VectorXd::Unit(C, V + 1);

  const double R = theory::readout_at_p0_exact(p.d, p.beta, sim::layers::norm_eps);
  const double a = p.neuron_scale / R;
  view("blocks.0.mlp.w1") = a * u.transpose();                      // (1,C)
  view("blocks.0.mlp.w2") = (p.c / gelu_tanh(p.neuron_scale)) * w;  // (C,1)

  // Layer 1: score = q.k/sqrt(D) = gamma^2 <n_t,w><n_k,w>/sqrt(D) = G <n_t,w><n_k,w>/C.
  const double gamma = std::sqrt(p.sink_gain * std::sqrt(static_cast<double>(D)) / static_cast<double>(C));
  auto wq = view("blocks.1.attn.wq");
  auto wk = view("blocks.1.attn.wk");
  for (Index h = 0; h < H; ++h) {
    wq.row(h * D) = gamma * w.transpose();
    wk.row(h * D) = gamma * w.transpose();
  }
}

theory::ReadoutLaw readout_law(const CircuitPoint& p) {
  return theory::readout_law(p.d, p.alpha, p.beta, sim::layers::norm_eps);
}

CircuitResult run_circuit(const CircuitPoint& p, const CircuitOptions& o) {
  validate(p);
  if (o.sequences < 2) throw UsageError("--sequences", "must be >= 2");
  if (o.models < 1) throw UsageError("--models", "must be >= 1");
  const int C = p.d, T = p.T, V = p.vocab_size(), H = p.heads;
  const int B = std::min(o.sequences, 64);
  const sim::ModelConfig cfg = circuit_model_config(p);
  sim::Model<double> model(cfg, B);
  const double R = theory::readout_at_p0_exact(C, p.beta, sim::layers::norm_eps);
  const double tol = identify_tol(C);

  CircuitResult r;
  RunningStats margin_stats, readout_stats;
  double margin_min = std::numeric_limits<double>::infinity();
  long identified = 0, total = 0;
  double batch_weight = 0;
  std::vector<std::int32_t> rows(static_cast<std::size_t>(B) * (T + 1));  // (B,T+1)
  std::vector<double> readout(static_cast<std::size_t>(T));               // (T) of one sequence
  std::vector<char> seen(static_cast<std::size_t>(V));

  for (int m = 0; m < o.models; ++m) {
    const std::uint64_t seed = derive_seed(o.seed, point_key(p), static_cast<std::uint64_t>(m));
    wire_circuit(model, p, seed);
    PhiloxStream tokens(seed, 1);
    std::fill(seen.begin(), seen.end(), 0);
    for (int done = 0; done < o.sequences;) {
      const int b_now = std::min(B, o.sequences - done);
      for (auto& tok : rows) tok = static_cast<std::int32_t>(tokens.below(static_cast<std::uint32_t>(V)));
      model.forward(rows.data(), b_now);
      const double* mid = model.hidden_mid(0);  // (B,T,C) after layer 0's attention
      for (int b = 0; b < b_now; ++b) {
        for (int t = 0; t < T; ++t) {
          Eigen::Map<const Eigen::VectorXd> h(mid + (static_cast<Index>(b) * T + t) * C, C);
          // <RMSNorm(h), u> with gain 1 and the engine's eps; u is the last basis vector.
          readout[static_cast<std::size_t>(t)] =
              h(C - 1) / std::sqrt(h.squaredNorm() / static_cast<double>(C) + sim::layers::norm_eps);
        }
        const double best = *std::max_element(readout.begin() + 1, readout.end());
        const double margin = readout[0] - best;
        margin_stats.add(margin);
        margin_min = std::min(margin_min, margin);
        identified += margin > tol ? 1 : 0;
        ++total;
        const std::int32_t x0 = rows[static_cast<std::size_t>(b) * (T + 1)];
        r.first_tokens.push_back(x0);
        r.second_tokens.push_back(rows[static_cast<std::size_t>(b) * (T + 1) + 1]);
        r.margins.push_back(margin);
        if (!seen[static_cast<std::size_t>(x0)]) {  // one draw of the law per (model, token)
          seen[static_cast<std::size_t>(x0)] = 1;
          r.readout0.push_back(readout[0]);
          readout_stats.add(readout[0]);
        }
      }
      if (b_now >= 2) {  // metrics are means over the batch's sequences; p0_cos needs two
        const double wgt = b_now;
        const auto s0 = sim::state_metrics(model.hidden(1), b_now, T, C);
        const auto s1 = sim::state_metrics(model.hidden(2), b_now, T, C);
        const auto heads = sim::head_attention(model.attention(1), b_now, H, T, false, nullptr, o.sink_eps);
        const auto sink = sim::sink_metrics(heads, o.sink_eps);
        r.p0_norm_b0 += wgt * s0.p0_norm;
        r.p0_norm_ratio_b0 += wgt * s0.p0_norm_ratio;
        r.p0_cos_b0 += wgt * s0.p0_cos;
        r.p0_norm_ratio_b1 += wgt * s1.p0_norm_ratio;
        r.p0_cos_b1 += wgt * s1.p0_cos;
        r.sink_rate += wgt * sink.sink_rate;
        r.attn_to_0 += wgt * sink.attn_to_0;
        r.attn_to_1 += wgt * sink.attn_to_1;
        batch_weight += wgt;
      }
      done += b_now;
    }
  }
  for (double* v : {&r.p0_norm_b0, &r.p0_norm_ratio_b0, &r.p0_cos_b0, &r.p0_norm_ratio_b1, &r.p0_cos_b1, &r.sink_rate,
                    &r.attn_to_0, &r.attn_to_1})
    *v /= batch_weight;

  r.margin_min = margin_min;
  r.margin_mean = margin_stats.mean;
  r.identified_frac = static_cast<double>(identified) / static_cast<double>(total);
  const bool causal = p.mask == sim::Mask::causal;
  r.identified_pred = theory::identified_prob(causal, p.alpha, V, T);
  r.p0_norm_pred = theory::p0_norm_after_block0(causal, p.alpha, p.beta, p.c);

  // Readout law at position 0: meaningful under the causal mask (bidirectional h_0 mixes all tokens).
  const theory::ReadoutLaw law = readout_law(p);
  std::vector<double> sorted = r.readout0;
  std::sort(sorted.begin(), sorted.end());
  r.readout0_mean = readout_stats.mean;
  r.readout0_ci95 = readout_stats.ci_half_width(0.95);
  r.q10 = empirical_quantile(sorted, 0.1);
  r.q50 = empirical_quantile(sorted, 0.5);
  r.q90 = empirical_quantile(sorted, 0.9);
  if (causal) {
    r.readout0_pred_mean = law.mean();
    r.pred_q10 = law.quantile(0.1);
    r.pred_q50 = law.quantile(0.5);
    r.pred_q90 = law.quantile(0.9);
    const double n = static_cast<double>(sorted.size());
    double ks = 0, dev = 0;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (law.point_mass) {
        dev = std::max(dev, std::fabs(sorted[i] - R));
      } else {
        const double F = law.cdf(sorted[i]);
        ks = std::max({ks, (static_cast<double>(i) + 1.0) / n - F, F - static_cast<double>(i) / n});
      }
    }
    r.ks = law.point_mass ? (dev <= 1e-12 * R ? 0.0 : 1.0) : ks;
    r.readout0_max_dev = law.point_mass ? dev : kNaN;
  } else {
    r.readout0_pred_mean = r.pred_q10 = r.pred_q50 = r.pred_q90 = r.ks = r.readout0_max_dev = kNaN;
  }
  return r;
}

// ---- output ---------------------------------------------------------------------------------------
std::string circuit_csv_header() {
  return "d,T,vocab,heads,alpha,beta,c,neuron_scale,sink_gain,mask,models,sequences,seed,"
         "margin_min,margin_mean,identified_frac,identified_pred,"
         "readout0_law,readout0_samples,readout0_mean,readout0_ci95,readout0_pred_mean,"
         "readout0_q10,readout0_pred_q10,readout0_q50,readout0_pred_q50,readout0_q90,readout0_pred_q90,"
         "readout0_ks,readout0_ks_crit95,readout0_max_dev,"
         "p0_norm_b0,p0_norm_pred,p0_norm_ratio_b0,p0_cos_b0,p0_norm_ratio_b1,p0_cos_b1,"
         "sink_rate_l1,attn_to_0_l1,attn_to_1_l1\n";
}

std::string circuit_csv_row(const CircuitPoint& p, const CircuitOptions& o, const CircuitResult& r) {
  const bool causal = p.mask == sim::Mask::causal;
  const double n = static_cast<double>(r.readout0.size());
  std::ostringstream s;
  s << p.d << ',' << p.T << ',' << p.vocab_size() << ',' << p.heads << ',' << fmt17(p.alpha) << ',' << fmt17(p.beta)
    << ',' << fmt17(p.c) << ',' << fmt17(p.neuron_scale) << ',' << fmt17(p.sink_gain) << ',' << enum_name(p.mask) << ','
    << o.models << ',' << o.sequences << ',' << o.seed << ',' << fmt17(r.margin_min) << ',' << fmt17(r.margin_mean)
    << ',' << fmt17(r.identified_frac) << ',' << fmt17(r.identified_pred) << ','
    << (causal ? readout_law(p).name() : "none") << ',' << r.readout0.size() << ',' << fmt17(r.readout0_mean) << ','
    << fmt17(r.readout0_ci95) << ',' << fmt17(r.readout0_pred_mean) << ',' << fmt17(r.q10) << ',' << fmt17(r.pred_q10)
    << ',' << fmt17(r.q50) << ',' << fmt17(r.pred_q50) << ',' << fmt17(r.q90) << ',' << fmt17(r.pred_q90) << ','
    << fmt17(r.ks) << ',' << fmt17(1.358 / std::sqrt(n)) << ',' << fmt17(r.readout0_max_dev) << ','
    << fmt17(r.p0_norm_b0) << ',' << fmt17(r.p0_norm_pred) << ',' << fmt17(r.p0_norm_ratio_b0) << ','
    << fmt17(r.p0_cos_b0) << ',' << fmt17(r.p0_norm_ratio_b1) << ',' << fmt17(r.p0_cos_b1) << ',' << fmt17(r.sink_rate)
    << ',' << fmt17(r.attn_to_0) << ',' << fmt17(r.attn_to_1) << '\n';
  return s.str();
}

std::string circuit_table_header() {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%5s %5s %7s %7s %8s %-13s %9s %9s %6s %8s %8s %7s %6s %6s\n", "d", "T", "alpha",
                "beta", "c", "mask", "margin", "mrg_min", "ident", "r0_mean", "r0_pred", "ratio", "cos", "sink");
  return buf;
}

std::string circuit_table_row(const CircuitPoint& p, const CircuitResult& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%5d %5d %7.3g %7.3g %8.4g %-13s %9.4g %9.3g %6.3f %8.4g %8.4g %7.3g %6.3f %6.2f\n",
                p.d, p.T, p.alpha, p.beta, p.c, enum_name(p.mask).c_str(), r.margin_mean, r.margin_min,
                r.identified_frac, r.readout0_mean, r.readout0_pred_mean, r.p0_norm_ratio_b0, r.p0_cos_b0, r.sink_rate);
  return buf;
}

}  // namespace p0sim::study
