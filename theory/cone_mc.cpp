// Monte Carlo of the cone model: seeds, the driver and the checks of a request. The estimators and
// the accumulators are in the files listed in cone_mc_simulator.hpp.
//
// Trials are cut into fixed blocks of kTrialsPerBlock; threads compute the blocks of a wave in any
// order, and the blocks' sums are merged in block order, so every thread count gives the same bits.
#include "theory/cone_mc.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <exception>
#include <mutex>
#include <type_traits>
#include <vector>

#include "common/errors.hpp"
#include "common/format.hpp"
#include "common/rng.hpp"
#include "common/thread_pool.hpp"
#include "theory/cone_mc_simulator.hpp"

namespace p0sim::theory {

// ---------------------------------------------------------------------------------------------
// Seeds.
std::string point_key(const ConePoint& p) {
  std::string key = "cone;model=" + enum_name(p.model) + ";d=" + std::to_string(p.d) + ";T=" + std::to_string(p.T) +
                    ";heads=" + std::to_string(p.heads);
  switch (p.model) {
    case ValueModel::axis:
      key += ";mu=" + fmt17(p.mu) + ";sigma=" + fmt17(p.sigma);
      break;
    case ValueModel::cap:
      key += ";theta=" + fmt17(p.theta);
      break;
    case ValueModel::gauss:
      key += ";m=" + fmt17(p.m) + ";sigma=" + fmt17(p.sigma);
      break;
    case ValueModel::count:
      break;
  }
  return key;
}

std::uint64_t point_seed(const ConePoint& p, std::uint64_t base_seed) {
  return derive_seed(base_seed, point_key(p), 0);
}

// ---------------------------------------------------------------------------------------------
// The driver.
namespace mc_detail {

Simulator::Simulator(const ConePoint& p, const std::vector<int>& positions, const McOptions& opt)
    : p_(p),
      pos_(positions),
      opt_(opt),
      seed_(point_seed(p, opt.seed)),
      k_(p.d / p.heads),
      P_(static_cast<Eigen::Index>(positions.size())),
      radial_(opt.estimator == McEstimator::radial) {
  chunk_vectors_ = std::max<std::int64_t>(1, std::min<std::int64_t>(p.T, kChunkFloats / p.d));
  offset_.setZero(p.d);
  for (int h = 0; h < p.heads; ++h) offset_[h * k_] = static_cast<float>(p.m);
  den2_.resize(p.T);  // (T) squared divisor of the prefix sum
  for (int t = 0; t < p.T; ++t) {
    const double den = p.mask == AttnMask::causal ? t + 1.0 : static_cast<double>(p.T);
    den2_[t] = den * den;
  }
  slot_.assign(static_cast<std::size_t>(p.T), -1);
  for (Eigen::Index i = 0; i < P_; ++i)
    slot_[static_cast<std::size_t>(positions[static_cast<std::size_t>(i)])] = static_cast<int>(i);
  if (radial_) {
    radial_steps_ = std::max(1, std::min(p.T, kRadialChunk / p.heads));
    // Causal steps add chi-square(k-2) to R2 (the part orthogonal to the axis and to the current
    // rest); the bidirectional total has R2 = T sigma^2 chi-square(k-1).
    chi_df_ = p.mask == AttnMask::causal ? k_ - 2 : k_ - 1;
    if (chi_df_ >= 2) {  // Marsaglia-Tsang for Gamma(df/2), shape >= 1
      mt_d_ = chi_df_ / 2.0 - 1.0 / 3.0;
      mt_c_ = 1.0 / std::sqrt(9.0 * mt_d_);
    }
  }
}

template <typename Scalar>
void Simulator::init(Workspace<Scalar>& w) const {
  if (radial_) {
    const Eigen::Index ct = radial_steps_, H = p_.heads;
    w.lanes.resize(kLanes);
    w.rz.resize(2 * ct * H * kLanes);
    w.rc.resize(ct * H * kLanes);
    w.rns.resize(ct * kLanes);
    w.rax.resize(ct * kLanes);
    w.rn2.resize(ct * kLanes);
    w.ra.resize(H * kLanes);
    w.rr2.resize(H * kLanes);
    w.out_ns.resize(kLanes * P_);
    w.out_ax.resize(kLanes * P_);
    w.out_n2.resize(kLanes * P_);
    w.tmp.resize(std::max<Eigen::Index>({2 * ct * H, H, kNormalsPerCall}));
    w.tmp_u.resize(kNormalsPerCall);
    w.tmp_c.resize(H);
  } else {
    w.normals.resize(chunk_vectors_ * p_.d);
    if constexpr (!std::is_same_v<Scalar, float>) w.chunk.resize(chunk_vectors_ * p_.d);
    w.sum.resize(p_.d);
    w.ns.resize(p_.T);
    w.ax.resize(p_.T);
    w.n2.resize(p_.T);
  }
  w.x.resize(P_, kRows);
  w.g_ns.resize(P_);
  w.g_ax.resize(P_);
}

McResult Simulator::run() {
  for (auto& a : acc_) a.assign(static_cast<std::size_t>(P_), RunningStats{});
  acc_m4_.assign(static_cast<std::size_t>(P_), Moments4{});
  const std::int64_t nblocks = (opt_.trials + kTrialsPerBlock - 1) / kTrialsPerBlock;
  const std::int64_t slot_bytes =
      (3 * kRows + 2) * static_cast<std::int64_t>(sizeof(double)) * std::max<Eigen::Index>(P_, 1);
  const std::int64_t wave_blocks = std::clamp<std::int64_t>(kWaveBytes / slot_bytes, 2 * opt_.threads, 256);
  const int nthreads =
      static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({opt_.threads, wave_blocks, nblocks})));
  std::vector<BlockSums> slots(static_cast<std::size_t>(std::min<std::int64_t>(wave_blocks, nblocks)));
  for (auto& s : slots) s.resize(P_);

  // Threads compute the blocks of one wave in any order into their slots; the barrier's
  // completion step merges the slots in block order, so the result does not depend on threads.
  std::int64_t wave_begin = 0, wave_end = std::min<std::int64_t>(wave_blocks, nblocks);
  std::atomic<std::int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto complete = [&]() noexcept {
    if (!failed.load())
      for (std::int64_t b = wave_begin; b < wave_end; ++b) merge(slots[static_cast<std::size_t>(b - wave_begin)]);
    wave_begin = wave_end;
    wave_end = std::min(wave_end + wave_blocks, nblocks);
    next.store(wave_begin);
  };
  std::barrier sync(nthreads, complete);
  auto work = [&]<typename Scalar>() {
    Workspace<Scalar> w;
    try {
      init(w);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed.store(true);
    }
    while (wave_begin < nblocks) {
      const std::int64_t end = wave_end;
      for (std::int64_t b = next.fetch_add(1); b < end; b = next.fetch_add(1)) {
        if (failed.load()) continue;
        try {
          block(b, slots[static_cast<std::size_t>(b - wave_begin)], w);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
          failed.store(true);
        }
      }
      sync.arrive_and_wait();
    }
  };
  // Every failure is caught inside `work` and rethrown below: a pool thread cannot carry one.
  ThreadPool pool(nthreads);
  pool.run_each([&](int) {
    if (p_.model == ValueModel::gauss)
      work.template operator()<float>();
    else
      work.template operator()<double>();
  });
  if (error) std::rethrow_exception(error);

  McResult res;
  res.positions = pos_;
  res.stats.assign(static_cast<std::size_t>(P_), std::vector<RunningStats>(std::size(kAllQuantities)));
  for (std::size_t i = 0; i < static_cast<std::size_t>(P_); ++i) {
    auto& s = res.stats[i];
    s[static_cast<int>(Quantity::norm_sq_mean)] = acc_[kNormSq][i];
    s[static_cast<int>(Quantity::norm_mean)] = acc_[kNorm][i];
    s[static_cast<int>(Quantity::cos_axis_mean)] = acc_[kCos][i];
    s[static_cast<int>(Quantity::p0_gap)] = acc_[kGap][i];
    s[static_cast<int>(Quantity::p0_beats_t_prob)] = acc_[kBeats][i];
    s[static_cast<int>(Quantity::p0_largest_prob)] = acc_largest_;
    // Var ||o_t||^2: unbiased s^2; its delta-method variance (m4 - (n-3)/(n-1) s^4)/n, stored
    // as m2 so that std_error() returns its square root.
    const Moments4& m = acc_m4_[i];
    RunningStats v;
    v.n = static_cast<std::uint64_t>(m.n);
    if (m.n > 1) {
      const double s2 = m.m2 / (m.n - 1.0), mu4 = m.m4 / m.n;
      const double var_s2 = std::max(0.0, (mu4 - (m.n - 3.0) / (m.n - 1.0) * s2 * s2) / m.n);
      v.mean = s2;
      v.m2 = var_s2 * m.n * (m.n - 1.0);
    }
    s[static_cast<int>(Quantity::norm_sq_var)] = v;
  }
  return res;
}

}  // namespace mc_detail

void validate_estimator(const ConePoint& p, McEstimator e) {
  if (e == McEstimator::radial && p.model != ValueModel::gauss)
    throw UsageError("--estimator", "radial needs --model gauss, got " + enum_name(p.model));
}

McResult simulate(const ConePoint& p, const std::vector<int>& positions, const McOptions& opt) {
  validate(p);
  validate_estimator(p, opt.estimator);
  if (opt.trials < 2) throw UsageError("--trials", "must be at least 2");
  if (opt.threads < 1) throw UsageError("--threads", "must be at least 1");
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (positions[i] < 0 || positions[i] >= p.T)
      throw UsageError("--positions",
                       "position " + std::to_string(positions[i]) + " outside 0.." + std::to_string(p.T - 1));
    for (std::size_t j = 0; j < i; ++j)
      if (positions[j] == positions[i]) throw UsageError("--positions", "position listed twice");
  }
  mc_detail::Simulator sim(p, positions, opt);
  return sim.run();
}

}  // namespace p0sim::theory
