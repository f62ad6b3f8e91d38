#include "sim/plot_dump.hpp"

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <system_error>
#include <vector>

#include "common/errors.hpp"
#include "sim/data.hpp"
#include "sim/npy.hpp"

namespace p0sim::sim {
namespace fs = std::filesystem;

void write_probe_dump(const fs::path& dir, const Model<float>& trained, const TrainConfig& c) {
  const ModelConfig& mc = c.model;
  const int N = c.probe.batch, P = mc.positions(), C = mc.d_model, H = mc.heads, L = mc.layers;
  // The Prober's rows: batch 0 of data stream 1 under the run's seed.
  DataConfig data = c.data;
  data.seed = c.seed;
  const DataGenerator gen(data);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(N) * gen.row_length());  // (N,T+1)
  gen.fill(1, 0, N, rows.data());
  Model<float> model(mc, N);
  model.params() = trained.params();
  model.forward(rows.data(), N);

  // Plain loops with a fixed summation order: Eigen's vectorised reductions into a Map peel by the
  // destination's address, so the last bits would depend on where the heap put the buffer (a
  // resumed run would then differ from an uninterrupted one).
  const std::size_t HPP = static_cast<std::size_t>(H) * P * P;
  std::vector<float> attn_mean(static_cast<std::size_t>(L) * HPP, 0.0f);  // (L,H,P,P)
  for (int l = 0; l < L; ++l) {
    const float* a = model.attention(l);  // (N,H,P,P)
    float* mean = attn_mean.data() + l * HPP;
    for (int n = 0; n < N; ++n)
      for (std::size_t k = 0; k < HPP; ++k) mean[k] += a[n * HPP + k];
    for (std::size_t k = 0; k < HPP; ++k) mean[k] /= static_cast<float>(N);
  }
  std::vector<float> norms(static_cast<std::size_t>(L + 1) * P, 0.0f);  // (L+1,P)
  for (int l = 0; l <= L; ++l) {
    const float* h = model.hidden(l);  // (N,P,C)
    float* by_position = norms.data() + static_cast<std::size_t>(l) * P;
    for (int n = 0; n < N; ++n)
      for (int t = 0; t < P; ++t) {
        const float* x = h + (static_cast<std::size_t>(n) * P + t) * C;
        float sq = 0.0f;
        for (int i = 0; i < C; ++i) sq += x[i] * x[i];
        by_position[t] += std::sqrt(sq);
      }
    for (int t = 0; t < P; ++t) by_position[t] /= static_cast<float>(N);
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RunError("cannot create " + dir.string() + ": " + ec.message());
  write_npy(dir / "attn_mean.npy", attn_mean.data(), {L, H, P, P});
  write_npy(dir / "norm_by_position.npy", norms.data(), {L + 1, P});
}

}  // namespace p0sim::sim
