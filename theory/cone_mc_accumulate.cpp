// From a trial's norms to the reported statistics: the per-trial quantities, the sums of one block
// of trials (shifted so they do not cancel) and their merge, always in block order, into the
// running statistics.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "theory/cone_mc_simulator.hpp"

namespace p0sim::theory::mc_detail {
namespace {

// out[i] = sqrt(in[i]), correctly rounded (IEEE), 8 at a time where AVX-512 is available.
void exact_sqrt(double* out, const double* in, Eigen::Index n) {
  Eigen::Index i = 0;
#if defined(__AVX512F__)
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(out + i, _mm512_sqrt_pd(_mm512_loadu_pd(in + i)));
#endif
  for (; i < n; ++i) out[i] = std::sqrt(in[i]);
}

// out[i] = in[i * kLanes + lane] for i < n: one sequence of a radial group.
void gather_lane(double* out, const double* in, int lane, Eigen::Index n) {
  Eigen::Index i = 0;
#if defined(__AVX512F__)
  const __m512i index = _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64(kLanes));
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(out + i, _mm512_i64gather_pd(index, in + i * kLanes + lane, 8));
#endif
  for (; i < n; ++i) out[i] = in[i * kLanes + lane];
}

}  // namespace

template <typename Scalar>
void Simulator::quantities(Workspace<Scalar>& w, double n0sq) const {
  const double n0 = std::sqrt(n0sq), rs_h = 1.0 / std::sqrt(static_cast<double>(p_.heads));
  // std::sqrt, not Eigen's .sqrt(): with EIGEN_FAST_MATH Eigen's AVX-512 double sqrt is an
  // rsqrt14 + Newton approximation, and equal norms must give exactly equal roots (zero gaps).
  exact_sqrt(w.x.col(kNorm).data(), w.x.col(kNormSq).data(), P_);
  exact_sqrt(w.g_ns.data(), w.g_ns.data(), P_);
  w.x.col(kCos) = w.g_ax * rs_h / w.g_ns;
  w.x.col(kGap) = n0 - w.x.col(kNorm);
  w.x.col(kBeats) = (w.x.col(kNormSq) < n0sq).template cast<double>();
}
template void Simulator::quantities<float>(Workspace<float>&, double) const;
template void Simulator::quantities<double>(Workspace<double>&, double) const;

template <typename Scalar>
void Simulator::block(std::int64_t b, BlockSums& out, Workspace<Scalar>& w) const {
  const std::int64_t first = b * kTrialsPerBlock;
  const std::int64_t last = std::min(opt_.trials, first + kTrialsPerBlock);
  out.n = last - first;
  out.largest = 0;
  out.s1.setZero();
  out.s2.setZero();
  out.s3.setZero();
  out.s4.setZero();
  auto add = [&](std::int64_t i, bool largest) {  // w.x of trial i
    out.largest += largest ? 1 : 0;
    if (i == first) out.shift = w.x;
    w.x -= out.shift;
    out.s1 += w.x;
    out.s2 += w.x.square();
    const auto dn = w.x.col(kNormSq);  // (P)
    out.s3 += dn * dn * dn;
    out.s4 += dn.square().square();
  };
  if constexpr (std::is_same_v<Scalar, float>) {
    if (radial_) {
      for (std::int64_t g0 = first; g0 < last; g0 += kLanes) {
        const int nl = static_cast<int>(std::min<std::int64_t>(kLanes, last - g0));
        radial_group(g0, nl, w);
        for (int l = 0; l < nl; ++l) {
          gather_lane(w.x.col(kNormSq).data(), w.out_n2.data(), l, P_);
          gather_lane(w.g_ns.data(), w.out_ns.data(), l, P_);
          gather_lane(w.g_ax.data(), w.out_ax.data(), l, P_);
          quantities(w, w.n0sq[static_cast<std::size_t>(l)]);
          add(g0 + l, w.largest[static_cast<std::size_t>(l)]);
        }
      }
      return;
    }
  }
  for (std::int64_t i = first; i < last; ++i) {
    const bool largest = trial(i, w);
    add(i, largest);
  }
}
template void Simulator::block<float>(std::int64_t, BlockSums&, Workspace<float>&) const;
template void Simulator::block<double>(std::int64_t, BlockSums&, Workspace<double>&) const;

void Simulator::merge(const BlockSums& b) {
  const double n = static_cast<double>(b.n);
  for (int r = 0; r < kRows; ++r) {
    for (Eigen::Index i = 0; i < P_; ++i) {
      RunningStats s;
      s.n = static_cast<std::uint64_t>(b.n);
      s.mean = b.shift(i, r) + b.s1(i, r) / n;
      s.m2 = std::max(0.0, b.s2(i, r) - b.s1(i, r) * b.s1(i, r) / n);
      acc_[r][static_cast<std::size_t>(i)].merge(s);
    }
  }
  for (Eigen::Index i = 0; i < P_; ++i) {
    // Central moments from sums of powers shifted by c: with dl = mean of (x - c),
    // M_k = sum (x - c - dl)^k expanded binomially.
    const double s1 = b.s1(i, kNormSq), s2 = b.s2(i, kNormSq), s3 = b.s3[i], s4 = b.s4[i];
    const double dl = s1 / n;
    Moments4 m;
    m.n = n;
    m.mean = b.shift(i, kNormSq) + dl;
    m.m2 = std::max(0.0, s2 - n * dl * dl);
    m.m3 = s3 - 3.0 * dl * s2 + 2.0 * n * dl * dl * dl;
    m.m4 = std::max(0.0, s4 - 4.0 * dl * s3 + 6.0 * dl * dl * s2 - 3.0 * n * dl * dl * dl * dl);
    acc_m4_[static_cast<std::size_t>(i)].merge(m);
  }
  RunningStats l;
  l.n = static_cast<std::uint64_t>(b.n);
  l.mean = static_cast<double>(b.largest) / n;
  l.m2 = std::max(0.0, static_cast<double>(b.largest) * (1.0 - l.mean));  // sum (x - mean)^2 of 0/1 values
  acc_largest_.merge(l);
}

}  // namespace p0sim::theory::mc_detail
