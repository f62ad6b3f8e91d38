#pragma once
// Every use of Eigen's internal API sits here, so the rest of p0sim uses Eigen's public API only.
//  - gemm: Eigen's GEMM kernel on packing space sized when the model is built. The public product
//    packs its operands into blocks it allocates on the heap once they pass 128 KiB, which a
//    training step must not do; calling the kernel with our own blocking object keeps the packing
//    space in one buffer, and skips the expression layer for the many small per-head products.
//  - register_max: a chunk's maximum reduced in registers (maxCoeff goes through memory).
//  - pin_cache_sizes: Eigen's block sizes from fixed cache sizes, not the CPU's.
//  - ieee_sqrt: a correctly rounded packet square root.
#include <immintrin.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <mutex>

namespace p0sim::sim {

// Eigen sizes its GEMM blocks from the cache sizes it reads off the CPU, and a product's blocks
// decide the order of its additions: the same binary would round differently on a machine with
// other caches (bench/bench_gemm_libs.cpp found three shapes of the natural-text config that do).
// The engine fixes them to what Eigen reads on the machine its golden files come from (a Zen 5
// VM: L1 48 KiB, L2 1 MiB, L3 508 MiB), so the bits there are unchanged and every other machine
// blocks the same way. Set once, before the first product (every GemmSpace calls it).
inline constexpr std::ptrdiff_t kPinnedL1 = 49152, kPinnedL2 = 1048576, kPinnedL3 = 532676608;
inline void pin_cache_sizes() {
  static std::once_flag once;
  std::call_once(once, [] { Eigen::setCpuCacheSizes(kPinnedL1, kPinnedL2, kPinnedL3); });
}

// Packing space of every product (and the work space of the fused attention kernels).
template <typename S>
class GemmSpace {
 public:
  using Index = Eigen::Index;
  GemmSpace() { pin_cache_sizes(); }
  // Grows the packing space to fit an m x n x k product (setup time only: this allocates).
  void reserve(Index m, Index n, Index k) {
    Index kc = k, mc = m, nc = n;
    Eigen::internal::computeProductBlockingSizes<S, S, 1, Index>(kc, mc, nc, 1);
    if (kc * mc > a_.size()) a_.resize(kc * mc);
    if (kc * nc > b_.size()) b_.resize(kc * nc);
  }
  // Work space of the fused kernels (attention panels), grown like the packing space.
  void reserve_work(Index n) {
    if (n > work_.size()) work_.resize(n);
  }
  S* work() { return work_.data(); }
  S* a() { return a_.data(); }
  S* b() { return b_.data(); }
  Index cap_a() const { return a_.size(); }
  Index cap_b() const { return b_.size(); }

 private:
  using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;
  Vec a_, b_;  // aligned to Eigen's packet size, as the kernel's packed loads require
  Vec work_;
};

namespace gemm_detail {
template <typename S>
struct PresizedBlocking : Eigen::internal::level3_blocking<S, S> {
  using Index = Eigen::Index;
  PresizedBlocking(Index m, Index n, Index k, GemmSpace<S>& ws) {
    Index kc = k, mc = m, nc = n;
    Eigen::internal::computeProductBlockingSizes<S, S, 1, Index>(kc, mc, nc, 1);
    // A shape that was not reserved still runs correctly, in smaller blocks.
    kc = std::max<Index>(1, std::min({kc, ws.cap_a(), ws.cap_b()}));
    if (kc * mc > ws.cap_a()) mc = std::max<Index>(1, ws.cap_a() / kc);
    if (kc * nc > ws.cap_b()) nc = std::max<Index>(1, ws.cap_b() / kc);
    this->m_kc = kc;
    this->m_mc = mc;
    this->m_nc = nc;
    this->m_blockA = ws.a();
    this->m_blockB = ws.b();
  }
};
}  // namespace gemm_detail

// C (m,n) col-major with leading dimension ldc: C = [C +] alpha op(A) op(B).
// TA: A is stored (k,m) col-major and used transposed; else stored (m,k). TB likewise, (n,k) or (k,n).
template <typename S, bool TA, bool TB>
void gemm(Eigen::Index m, Eigen::Index n, Eigen::Index k, S alpha, const S* A, Eigen::Index lda, const S* B,
          Eigen::Index ldb, bool accumulate, S* C, Eigen::Index ldc, GemmSpace<S>& ws) {
  using Index = Eigen::Index;
  using Strided = Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>, 0, Eigen::OuterStride<>>;
  if (!accumulate) Strided(C, m, n, Eigen::OuterStride<>(ldc)).setZero();
  if (m == 0 || n == 0 || k == 0) return;
  gemm_detail::PresizedBlocking<S> blocking(m, n, k, ws);
  Eigen::internal::general_matrix_matrix_product<Index, S, TA ? Eigen::RowMajor : Eigen::ColMajor, false, S,
                                                 TB ? Eigen::RowMajor : Eigen::ColMajor, false, Eigen::ColMajor,
                                                 1>::run(m, n, k, A, lda, B, ldb, C, 1, ldc, alpha, blocking);
}

// The maximum of a chunk, reduced in registers where one packet holds the chunk; a maximum is exact,
// so either path gives the same bits.
template <typename S, int Lanes>
S register_max(const Eigen::Array<S, Lanes, 1>& m) {
  using Packet = typename Eigen::internal::packet_traits<S>::type;
  if constexpr (Eigen::internal::packet_traits<S>::size == Lanes)
    return Eigen::internal::predux_max(Eigen::internal::ploadu<Packet>(m.data()));
  else
    return m.maxCoeff();
}

// Eigen's packet sqrt under EIGEN_FAST_MATH (its default) is a hardware rsqrt estimate refined by
// one Newton step, and the estimate's last bits differ between CPU vendors: the same binary gave
// other AdamW steps under an emulated Intel than on AMD. The sqrt instruction is correctly rounded
// everywhere, and as fast at the optimiser's size.
namespace sqrt_detail {
inline __m128 packet_sqrt(__m128 x) { return _mm_sqrt_ps(x); }
inline __m128d packet_sqrt(__m128d x) { return _mm_sqrt_pd(x); }
#ifdef __AVX__
inline __m256 packet_sqrt(__m256 x) { return _mm256_sqrt_ps(x); }
inline __m256d packet_sqrt(__m256d x) { return _mm256_sqrt_pd(x); }
#endif
#ifdef __AVX512F__
inline __m512 packet_sqrt(__m512 x) { return _mm512_sqrt_ps(x); }
inline __m512d packet_sqrt(__m512d x) { return _mm512_sqrt_pd(x); }
#endif
struct IeeeSqrtOp {
  template <typename S>
  S operator()(S x) const {
    return std::sqrt(x);
  }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    return packet_sqrt(x);
  }
};
}  // namespace sqrt_detail

// An array expression's elementwise square root, correctly rounded (IEEE 754) in every lane.
template <typename Derived>
auto ieee_sqrt(const Eigen::ArrayBase<Derived>& x) {
  return x.unaryExpr(sqrt_detail::IeeeSqrtOp{});
}

}  // namespace p0sim::sim

template <>
struct Eigen::internal::functor_traits<p0sim::sim::sqrt_detail::IeeeSqrtOp> {
  enum { Cost = 5 * Eigen::NumTraits<float>::MulCost, PacketAccess = 1 };
};
