#include "sim/plot_dump.hpp"

#include <Eigen/Core>
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

  using MatrixRM = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Index HPP = static_cast<Eigen::Index>(H) * P * P;
  std::vector<float> attn_mean(static_cast<std::size_t>(L) * HPP);  // (L,H,P,P)
  for (int l = 0; l < L; ++l) {
    Eigen::Map<const MatrixRM> a(model.attention(l), N, HPP);  // (N, H*P*P)
    Eigen::Map<Eigen::RowVectorXf>(attn_mean.data() + l * HPP, HPP) = a.colwise().mean();
  }
  std::vector<float> norms(static_cast<std::size_t>(L + 1) * P);  // (L+1,P)
  for (int l = 0; l <= L; ++l) {
    Eigen::Map<const Eigen::MatrixXf> h(model.hidden(l), C, static_cast<Eigen::Index>(N) * P);  // C x (N*P)
    const Eigen::RowVectorXf n = h.colwise().norm();                                            // (N*P)
    Eigen::Map<const MatrixRM> by_row(n.data(), N, P);                                          // (N,P)
    Eigen::Map<Eigen::RowVectorXf>(norms.data() + static_cast<std::ptrdiff_t>(l) * P, P) = by_row.colwise().mean();
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RunError("cannot create " + dir.string() + ": " + ec.message());
  write_npy(dir / "attn_mean.npy", attn_mean.data(), {L, H, P, P});
  write_npy(dir / "norm_by_position.npy", norms.data(), {L + 1, P});
}

}  // namespace p0sim::sim
