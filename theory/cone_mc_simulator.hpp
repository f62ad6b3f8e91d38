#pragma once
// The Monte Carlo's simulator, shared by its files and by nothing else (the interface is
// cone_mc.hpp). Dimension legend: T positions, d = H*k value dimension (H heads of k = d/H),
// P requested positions, CH value vectors per generated chunk.
//   cone_mc_full.cpp        the full-vector estimator: value vectors, prefix sums, norms
//   cone_mc_radial.cpp      the radial estimator (gauss): the per-head chain of (a, R2)
//   cone_mc_accumulate.cpp  per-trial quantities, block sums and their ordered merge
//   cone_mc.cpp             seeds, the driver (blocks in waves on the thread pool), validation
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/rng.hpp"
#include "common/stats.hpp"
#include "theory/cone_mc.hpp"

namespace p0sim::theory::mc_detail {

constexpr int kTrialsPerBlock = 64;  // fixed, so blocks (and the merge order) never depend on threads
// Blocks computed in parallel between two ordered merges: as many as ~32 MiB of block sums allow
// (the result does not depend on it, only the idle time at the wave barrier does).
constexpr std::int64_t kWaveBytes = std::int64_t{32} << 20;
constexpr std::int64_t kChunkFloats = 16384;                    // value vectors generated at once (64 KiB, stays in L2)
constexpr std::uint64_t kCapStreamTag = 0x5851F42D4C957F2Dull;  // key offset of the cap's uniforms

// The radial estimator advances kLanes sequences together, one per SIMD lane of the chain, and
// draws at most kRadialChunk (steps x heads) of each sequence's variates at once (~200 KiB for
// all lanes). Its streams have their own key offsets, so at one seed it is independent of `full`.
constexpr int kLanes = 16;  // a multiple of 8
constexpr int kRadialChunk = 512;
constexpr std::uint64_t kRadialNormalTag = 0x9E3779B97F4A7C15ull;
constexpr std::uint64_t kRadialUniformTag = 0xD1B54A32D192ED03ull;

// One sequence of a radial group: its streams and the chi-square draws accepted but not used yet.
struct RadialLane {
  NormalStream normal;
  UniformStream uniform;
  int chi_at = 0, chi_end = 0;              // unused draws: chi[chi_at .. chi_end)
  alignas(64) double chi[kNormalsPerCall];  // v^3 of accepted Marsaglia-Tsang candidates
};

// Per-trial quantities, columns of a (P, kRows) array (each quantity contiguous over positions).
enum Row { kNormSq = 0, kNorm, kCos, kGap, kBeats, kRows };

// Count, mean and central moments 2..4, merged exactly in a fixed order (Pebay 2008).
struct Moments4 {
  double n = 0, mean = 0, m2 = 0, m3 = 0, m4 = 0;
  void merge(const Moments4& o) {
    if (o.n == 0) return;
    if (n == 0) {
      *this = o;
      return;
    }
    const double na = n, nb = o.n, nn = na + nb, dl = o.mean - mean;
    const double dl2 = dl * dl;
    m4 = m4 + o.m4 + dl2 * dl2 * na * nb * (na * na - na * nb + nb * nb) / (nn * nn * nn) +
         6.0 * dl2 * (na * na * o.m2 + nb * nb * m2) / (nn * nn) + 4.0 * dl * (na * o.m3 - nb * m3) / nn;
    m3 = m3 + o.m3 + dl2 * dl * na * nb * (na - nb) / (nn * nn) + 3.0 * dl * (na * o.m2 - nb * m2) / nn;
    m2 = m2 + o.m2 + dl2 * na * nb / nn;
    mean = mean + dl * nb / nn;
    n = nn;
  }
};

// Sums of one block, shifted by the block's first trial so they do not cancel.
struct BlockSums {
  std::int64_t n = 0;
  Eigen::ArrayXXd shift, s1, s2;  // (P, kRows)
  Eigen::ArrayXd s3, s4;          // (P) of ||o_t||^2, for its variance's standard error
  std::int64_t largest = 0;       // trials where position 0 is strictly largest
  void resize(Eigen::Index P) {
    shift.resize(P, kRows);
    s1.resize(P, kRows);
    s2.resize(P, kRows);
    s3.resize(P);
    s4.resize(P);
  }
};

// Value vectors are float32 for gauss (the fast path). axis and cap build them in double: their
// ||v|| is constant, so ||o_0|| > ||o_1|| is decided by ||v_0 - v_1||^2, and float rounding of
// ||v|| (1e-7) would turn close pairs (probability ~1e-4 at k = 3) into false ties.
template <typename Scalar>
struct Workspace {
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  Eigen::VectorXf normals;    // (CH*d) standard normals of one chunk
  Vec chunk;                  // (CH*d) value vectors of the chunk (aliases `normals` for float)
  Vec sum;                    // (d) running sum of value vectors
  Eigen::ArrayXd ns;          // (T) ||sum_t||^2
  Eigen::ArrayXd ax;          // (T) <sum_t, (u_1..u_H)> (unnormalised axis)
  Eigen::ArrayXd n2;          // (T) ||o_t||^2
  Eigen::ArrayXXd x;          // (P, kRows) this trial's quantities
  Eigen::ArrayXd g_ns, g_ax;  // (P) sqrt(ns) and ax gathered at the requested positions
  // The radial estimator (gauss): kLanes sequences at once; CT = steps per chunk.
  std::vector<RadialLane> lanes;          // (kLanes)
  Eigen::ArrayXf rz;                      // (2*CT*H*kLanes) z1 then g, index (head * CT + step) * kLanes + lane
  Eigen::ArrayXd rc;                      // (CT*H*kLanes) sigma^2 chi-square(k-2), same index
  Eigen::ArrayXd rns, rax, rn2;           // (CT*kLanes) per step: ||S||^2, the axis sum (over heads), ||o||^2
  Eigen::ArrayXd ra, rr2;                 // (H*kLanes) the chain's state a, R2
  Eigen::ArrayXd out_ns, out_ax, out_n2;  // (P*kLanes) ns, ax, n2 at the requested positions, lane-minor
  Eigen::ArrayXf tmp;                     // (max(2*CT*H, H, 128)) one lane's normals
  Eigen::ArrayXf tmp_u;                   // (128) one lane's uniforms
  Eigen::ArrayXd tmp_c;                   // (H) bidirectional chi-squares
  std::array<double, kLanes> n0sq{};
  std::array<bool, kLanes> largest{};
  Scalar* values() { return std::is_same_v<Scalar, float> ? reinterpret_cast<Scalar*>(normals.data()) : chunk.data(); }
};

class Simulator {
 public:
  Simulator(const ConePoint& p, const std::vector<int>& positions, const McOptions& opt);
  McResult run();

 private:
  template <typename Scalar>
  void init(Workspace<Scalar>& w) const;  // sizes everything for this point
  template <typename Mat>
  void transform(Mat& vs, PhiloxStream& uni) const;              // normals -> value vectors, in place
  void prefix_gauss(Workspace<float>& w, int nv, int t0) const;  // causal gauss: transform + prefix + norms
  template <typename Scalar>
  bool trial(std::int64_t index, Workspace<Scalar>& w) const;  // fills w.x; returns "position 0 largest"
  // From ||o_t||^2 (w.x's first column), ||S_t||^2 (w.g_ns) and <S_t, axis> (w.g_ax) at the
  // requested positions and ||o_0||^2: the rest of w.x.
  template <typename Scalar>
  void quantities(Workspace<Scalar>& w, double n0sq) const;
  // The radial estimator: trials first .. first+nl-1 (nl <= kLanes) -> w.out_ns, out_ax, out_n2,
  // n0sq, largest.
  void radial_group(std::int64_t first, int nl, Workspace<float>& w) const;
  void chi2_fill(RadialLane& lane, Workspace<float>& w, double* out, int n, int stride) const;
  template <typename Scalar>
  void block(std::int64_t b, BlockSums& out, Workspace<Scalar>& w) const;
  void merge(const BlockSums& b);

  const ConePoint p_;
  const std::vector<int> pos_;
  const McOptions opt_;
  const std::uint64_t seed_;
  const int k_;
  const Eigen::Index P_;
  const bool radial_;
  std::int64_t chunk_vectors_ = 1;
  std::vector<int> slot_;           // (T) index of position t among the requested ones, or -1
  int radial_steps_ = 1;            // radial: steps per chunk (CT)
  int chi_df_ = 0;                  // radial: degrees of freedom of the chi-square added to R2 per draw
  double mt_d_ = 0.0, mt_c_ = 0.0;  // radial, chi_df_ >= 2: Marsaglia-Tsang's d = df/2 - 1/3, c = 1/sqrt(9d)
  Eigen::ArrayXd den2_;
  Eigen::VectorXf offset_;  // (d) gauss: m at each head's axis coordinate, 0 elsewhere
  // Global accumulators, merged in block order.
  std::vector<RunningStats> acc_[kRows];
  std::vector<Moments4> acc_m4_;
  RunningStats acc_largest_;
};

}  // namespace p0sim::theory::mc_detail
