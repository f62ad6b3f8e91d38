// Monte Carlo of the cone model (issue 2). Dimension legend: T positions, d = H*k value
// dimension (H heads of k = d/H), P requested positions, CH value vectors per generated chunk.
//
// Two estimators (McEstimator): `full` samples all T*d coordinates; `radial` (gauss) keeps per
// head only the running sum's axis component and the squared norm of the rest (see cone_mc.hpp).
// Both feed the same per-trial quantities, block sums and merge.
//
// Trials are cut into fixed blocks of kTrialsPerBlock; threads compute the blocks of a wave in any
// order, and the blocks' sums are merged in block order, so every thread count gives the same bits.
#include "theory/cone_mc.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "common/errors.hpp"
#include "common/format.hpp"
#include "common/rng.hpp"
#include "theory/cone_math.hpp"

namespace p0sim::theory {

// ---------------------------------------------------------------------------------------------
// Normal generator: Philox4x32-10 + Box-Muller, scalar reference and AVX-512 twin.
// No fused multiply-add in this section: the vectorised and the scalar generator must round
// identically, and GCC contracts a*b+c (even written with intrinsics) unless told not to.
// (GCC 12 then warns about its own _mm512_undefined_* inside the intrinsics: a false positive.)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
namespace {

constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // Random123 Philox4x32 multipliers
constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
constexpr float kSqrtHalf = 0.707106781186547524f;
constexpr float kAngleScale = 7.3145302892606e-10f;  // pi * 2^-32: odd integers up to 2^30 -> |phi| < pi/4
// Cephes logf / sinf / cosf minimax coefficients (accurate to a few ulp on the reduced ranges).
constexpr float kLogP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                            -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                            2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
constexpr float kLogQ1 = -2.12194440e-4f, kLogQ2 = 0.693359375f;
constexpr float kSin0 = -1.9515295891E-4f, kSin1 = 8.3321608736E-3f, kSin2 = -1.6666654611E-1f;
constexpr float kCos0 = 2.443315711809948E-5f, kCos1 = -1.388731625493765E-3f, kCos2 = 4.166664568298827E-2f;

inline std::uint32_t f2u(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float u2f(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The two normals of one Box-Muller pair, from the radius word w1 and the angle word w2.
inline void box_muller_scalar(std::uint32_t w1, std::uint32_t w2, float& z1, float& z2) {
  // ln u, u = (w1>>9 + 1/2) 2^-23 in (0,1), exactly as Cephes logf with its range reduction.
  const float u = (static_cast<float>(w1 >> 9) + 0.5f) * 0x1p-23f;
  const std::uint32_t bits = f2u(u);
  std::int32_t e = static_cast<std::int32_t>(bits >> 23) - 126;
  const float mant = u2f((bits & 0x007fffffu) | 0x3f000000u);  // in [0.5, 1)
  const bool low = mant < kSqrtHalf;
  float x = mant - 1.0f;
  x = x + (low ? mant : 0.0f);
  e = e - (low ? 1 : 0);
  const float fe = static_cast<float>(e);
  const float zz = x * x;
  float y = kLogP[0];
  for (int i = 1; i < 9; ++i) {
    y = y * x;
    y = y + kLogP[i];
  }
  y = y * x;
  y = y * zz;
  y = y + fe * kLogQ1;
  y = y - 0.5f * zz;
  float lnu = x + y;
  lnu = lnu + fe * kLogQ2;
  const float r = std::sqrt(-2.0f * lnu);

  const std::int32_t odd = static_cast<std::int32_t>((w2 & 0x3fffffffu) << 1) - 0x3fffffff;
  const float phi = static_cast<float>(odd) * kAngleScale;
  const float p2 = phi * phi;
  float s = kSin0 * p2;
  s = s + kSin1;
  s = s * p2;
  s = s + kSin2;
  s = s * p2;
  s = s * phi;
  s = s + phi;
  float c = kCos0 * p2;
  c = c + kCos1;
  c = c * p2;
  c = c + kCos2;
  c = c * p2;
  c = c * p2;
  c = c - 0.5f * p2;
  c = c + 1.0f;
  // Rotate by the quadrant q = w2 >> 30: (cos, sin)(q pi/2 + phi).
  const bool swap = (w2 & 0x40000000u) != 0;
  float a = swap ? s : c;
  float b = swap ? c : s;
  a = u2f(f2u(a) ^ ((w2 ^ (w2 << 1)) & 0x80000000u));
  b = u2f(f2u(b) ^ (w2 & 0x80000000u));
  z1 = r * a;
  z2 = r * b;
}

inline void mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}

// The four output words of Philox4x32-10 for counter (block lo, block hi, stream lo, stream hi).
inline void philox_block_scalar(std::uint64_t block, std::uint64_t key, std::uint64_t stream, std::uint32_t (&x)[4]) {
  x[0] = static_cast<std::uint32_t>(block);
  x[1] = static_cast<std::uint32_t>(block >> 32);
  x[2] = static_cast<std::uint32_t>(stream);
  x[3] = static_cast<std::uint32_t>(stream >> 32);
  std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    std::uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kM0, x[0], hi0, lo0);
    mulhilo(kM1, x[2], hi1, lo1);
    const std::uint32_t n0 = hi1 ^ x[1] ^ k0, n2 = hi0 ^ x[3] ^ k1;
    x[0] = n0;
    x[1] = lo1;
    x[2] = n2;
    x[3] = lo0;
  }
}

// A uniform on (0,1) from the top 24 bits of a word: ((w >> 8) + 1/2) 2^-24, exact in float.
inline float uniform24(std::uint32_t w) { return (static_cast<float>(w >> 8) + 0.5f) * 0x1p-24f; }

}  // namespace

void philox_normals_scalar(float* out, std::uint64_t key, std::uint64_t stream, std::uint64_t block0) {
  for (int lane = 0; lane < kNormalsPerCall / 4; ++lane) {
    float* o = out + 64 * (lane / 16);
    std::uint32_t x[4];
    philox_block_scalar(block0 + static_cast<std::uint64_t>(lane), key, stream, x);
    box_muller_scalar(x[0], x[1], o[lane % 16], o[16 + lane % 16]);
    box_muller_scalar(x[2], x[3], o[32 + lane % 16], o[48 + lane % 16]);
  }
}

void philox_uniforms_scalar(float* out, std::uint64_t key, std::uint64_t stream, std::uint64_t block0) {
  for (int lane = 0; lane < kNormalsPerCall / 4; ++lane) {
    float* o = out + 64 * (lane / 16) + lane % 16;
    std::uint32_t x[4];
    philox_block_scalar(block0 + static_cast<std::uint64_t>(lane), key, stream, x);
    for (int j = 0; j < 4; ++j) o[16 * j] = uniform24(x[j]);
  }
}

#if defined(__AVX512F__)
namespace {

inline void mulhilo16(__m512i a, __m512i m, __m512i& hi, __m512i& lo) {
  const __m512i even = _mm512_mul_epu32(a, m);                         // lanes 0,2,.. as 64-bit
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);   // lanes 1,3,..
  lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

// N batches of 16 Box-Muller pairs, each step applied to all N before the next, so the long
// dependency chains (log polynomial, sin/cos polynomials) of the batches overlap.
template <int N>
inline void box_muller16xN(const __m512i (&w1)[N], const __m512i (&w2)[N], float* const (&z1)[N], float* const (&z2)[N]) {
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 x[N], fe[N], zz[N], y[N], r[N];
  for (int i = 0; i < N; ++i) {
    const __m512 u = _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(w1[i], 9)), _mm512_set1_ps(0.5f)),
                                   _mm512_set1_ps(0x1p-23f));
    const __m512i bits = _mm512_castps_si512(u);
    __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(126));
    const __m512 mant = _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(0x3f000000)));
    const __mmask16 low = _mm512_cmp_ps_mask(mant, _mm512_set1_ps(kSqrtHalf), _CMP_LT_OQ);
    x[i] = _mm512_sub_ps(mant, one);
    x[i] = _mm512_add_ps(x[i], _mm512_maskz_mov_ps(low, mant));
    e = _mm512_mask_sub_epi32(e, low, e, _mm512_set1_epi32(1));
    fe[i] = _mm512_cvtepi32_ps(e);
    zz[i] = _mm512_mul_ps(x[i], x[i]);
    y[i] = _mm512_set1_ps(kLogP[0]);
  }
  for (int k = 1; k < 9; ++k)
    for (int i = 0; i < N; ++i) y[i] = _mm512_add_ps(_mm512_mul_ps(y[i], x[i]), _mm512_set1_ps(kLogP[k]));
  for (int i = 0; i < N; ++i) {
    y[i] = _mm512_mul_ps(y[i], x[i]);
    y[i] = _mm512_mul_ps(y[i], zz[i]);
    y[i] = _mm512_add_ps(y[i], _mm512_mul_ps(fe[i], _mm512_set1_ps(kLogQ1)));
    y[i] = _mm512_sub_ps(y[i], _mm512_mul_ps(_mm512_set1_ps(0.5f), zz[i]));
    __m512 lnu = _mm512_add_ps(x[i], y[i]);
    lnu = _mm512_add_ps(lnu, _mm512_mul_ps(fe[i], _mm512_set1_ps(kLogQ2)));
    r[i] = _mm512_sqrt_ps(_mm512_mul_ps(_mm512_set1_ps(-2.0f), lnu));
  }
  for (int i = 0; i < N; ++i) {
    const __m512i odd = _mm512_sub_epi32(_mm512_slli_epi32(_mm512_and_si512(w2[i], _mm512_set1_epi32(0x3fffffff)), 1),
                                         _mm512_set1_epi32(0x3fffffff));
    const __m512 phi = _mm512_mul_ps(_mm512_cvtepi32_ps(odd), _mm512_set1_ps(kAngleScale));
    const __m512 p2 = _mm512_mul_ps(phi, phi);
    __m512 s = _mm512_mul_ps(_mm512_set1_ps(kSin0), p2);
    s = _mm512_add_ps(s, _mm512_set1_ps(kSin1));
    s = _mm512_mul_ps(s, p2);
    s = _mm512_add_ps(s, _mm512_set1_ps(kSin2));
    s = _mm512_mul_ps(s, p2);
    s = _mm512_mul_ps(s, phi);
    s = _mm512_add_ps(s, phi);
    __m512 c = _mm512_mul_ps(_mm512_set1_ps(kCos0), p2);
    c = _mm512_add_ps(c, _mm512_set1_ps(kCos1));
    c = _mm512_mul_ps(c, p2);
    c = _mm512_add_ps(c, _mm512_set1_ps(kCos2));
    c = _mm512_mul_ps(c, p2);
    c = _mm512_mul_ps(c, p2);
    c = _mm512_sub_ps(c, _mm512_mul_ps(_mm512_set1_ps(0.5f), p2));
    c = _mm512_add_ps(c, one);
    const __mmask16 swap = _mm512_test_epi32_mask(w2[i], _mm512_set1_epi32(0x40000000));
    const __m512i signbit = _mm512_set1_epi32(static_cast<int>(0x80000000u));
    // a ^= (w2 ^ (w2 << 1)) & sign, b ^= w2 & sign, each one ternary-logic op.
    const __m512i a = _mm512_ternarylogic_epi32(_mm512_castps_si512(_mm512_mask_blend_ps(swap, c, s)),
                                                _mm512_xor_si512(w2[i], _mm512_slli_epi32(w2[i], 1)), signbit, 0x78);
    const __m512i b = _mm512_ternarylogic_epi32(_mm512_castps_si512(_mm512_mask_blend_ps(swap, s, c)), w2[i], signbit, 0x78);
    _mm512_storeu_ps(z1[i], _mm512_mul_ps(r[i], _mm512_castsi512_ps(a)));
    _mm512_storeu_ps(z2[i], _mm512_mul_ps(r[i], _mm512_castsi512_ps(b)));
  }
}

// Philox on 64-bit lanes holding one 32-bit word each in their low half: one vpmuludq then
// gives a lane's whole product (lo = the product's low half as is, hi = a shift), and the
// garbage that collects in the high halves is never read (vpmuludq reads low halves only).
// kVecs independent vectors of 8 blocks, interleaved so multiply latency is hidden.
// block0 is a multiple of kNormalsPerCall / 4, so the low counter word never carries.
constexpr int kVecs = kNormalsPerCall / 32;
using PhiloxVecs = __m512i[kVecs];

inline void philox_rounds(PhiloxVecs& x0, PhiloxVecs& x1, PhiloxVecs& x2, PhiloxVecs& x3, std::uint64_t key,
                          std::uint64_t stream, std::uint64_t block0) {
  const __m512i lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  for (int v = 0; v < kVecs; ++v) {
    x0[v] = _mm512_add_epi64(_mm512_set1_epi64(static_cast<std::uint32_t>(block0) + 8ll * v), lanes);
    x1[v] = _mm512_set1_epi64(static_cast<std::uint32_t>(block0 >> 32));
    x2[v] = _mm512_set1_epi64(static_cast<std::uint32_t>(stream));
    x3[v] = _mm512_set1_epi64(static_cast<std::uint32_t>(stream >> 32));
  }
  std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
  const __m512i m0 = _mm512_set1_epi64(kM0), m1 = _mm512_set1_epi64(kM1);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    const __m512i kk0 = _mm512_set1_epi64(k0), kk1 = _mm512_set1_epi64(k1);
    for (int v = 0; v < kVecs; ++v) {
      const __m512i p0 = _mm512_mul_epu32(x0[v], m0);
      const __m512i p1 = _mm512_mul_epu32(x2[v], m1);
      x0[v] = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p1, 32), x1[v], kk0, 0x96);  // hi1 ^ x1 ^ k0
      x1[v] = p1;                                                                        // lo1
      x2[v] = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p0, 32), x3[v], kk1, 0x96);  // hi0 ^ x3 ^ k1
      x3[v] = p0;                                                                        // lo0
    }
  }
}

// Gathers the low halves of two 8-block vectors into one 16-lane word vector (lane l = block l).
inline __m512i pack_words(__m512i lo_blocks, __m512i hi_blocks) {
  const __m512i pack = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_epi32(lo_blocks, pack, hi_blocks);
}

}  // namespace

void philox_normals(float* out, std::uint64_t key, std::uint64_t stream, std::uint64_t block0) {
  PhiloxVecs x0, x1, x2, x3;
  philox_rounds(x0, x1, x2, x3, key, stream, block0);
  constexpr int kBatches = kVecs;  // 16-pair batches: two per 16 blocks
  __m512i w1[kBatches], w2[kBatches];
  float* z1[kBatches];
  float* z2[kBatches];
  for (int v = 0; v < kVecs; v += 2) {
    float* o = out + 32 * v;
    const int i = v;
    w1[i] = pack_words(x0[v], x0[v + 1]);
    w2[i] = pack_words(x1[v], x1[v + 1]);
    w1[i + 1] = pack_words(x2[v], x2[v + 1]);
    w2[i + 1] = pack_words(x3[v], x3[v + 1]);
    z1[i] = o;
    z2[i] = o + 16;
    z1[i + 1] = o + 32;
    z2[i + 1] = o + 48;
  }
  box_muller16xN<kBatches>(w1, w2, z1, z2);
}

void philox_uniforms(float* out, std::uint64_t key, std::uint64_t stream, std::uint64_t block0) {
  PhiloxVecs x0, x1, x2, x3;
  philox_rounds(x0, x1, x2, x3, key, stream, block0);
  const __m512 half = _mm512_set1_ps(0.5f), scale = _mm512_set1_ps(0x1p-24f);
  auto uniform24x16 = [&](__m512i w) {
    return _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(w, 8)), half), scale);
  };
  for (int v = 0; v < kVecs; v += 2) {
    float* o = out + 32 * v;
    _mm512_storeu_ps(o, uniform24x16(pack_words(x0[v], x0[v + 1])));
    _mm512_storeu_ps(o + 16, uniform24x16(pack_words(x1[v], x1[v + 1])));
    _mm512_storeu_ps(o + 32, uniform24x16(pack_words(x2[v], x2[v + 1])));
    _mm512_storeu_ps(o + 48, uniform24x16(pack_words(x3[v], x3[v + 1])));
  }
}
bool philox_normals_vectorised() { return true; }
#else
void philox_normals(float* out, std::uint64_t key, std::uint64_t stream, std::uint64_t block0) {
  philox_normals_scalar(out, key, stream, block0);
}
void philox_uniforms(float* out, std::uint64_t key, std::uint64_t stream, std::uint64_t block0) {
  philox_uniforms_scalar(out, key, stream, block0);
}
bool philox_normals_vectorised() { return false; }
#endif

namespace {

// n numbers of a stream whose generator makes kNormalsPerCall per call: whole calls straight into
// out, the rest through spare (left of them unused at its end).
template <void (*Gen)(float*, std::uint64_t, std::uint64_t, std::uint64_t)>
void stream_fill(float* out, std::int64_t n, std::uint64_t key, std::uint64_t stream, std::uint64_t& next_block,
                 int& left, float* spare) {
  while (n > 0) {
    if (left > 0) {
      const int take = static_cast<int>(std::min<std::int64_t>(left, n));
      std::memcpy(out, spare + (kNormalsPerCall - left), sizeof(float) * take);
      left -= take;
      out += take;
      n -= take;
    } else if (n >= kNormalsPerCall) {
      Gen(out, key, stream, next_block);
      next_block += kNormalsPerCall / 4;
      out += kNormalsPerCall;
      n -= kNormalsPerCall;
    } else {
      Gen(spare, key, stream, next_block);
      next_block += kNormalsPerCall / 4;
      left = kNormalsPerCall;
    }
  }
}

}  // namespace

template <void (*Generate)(float*, std::uint64_t, std::uint64_t, std::uint64_t)>
void PhiloxFloatStream<Generate>::fill(float* out, std::int64_t n) {
  stream_fill<Generate>(out, n, key_, stream_, next_block_, left_, spare_);
}
template class PhiloxFloatStream<philox_normals>;
template class PhiloxFloatStream<philox_uniforms>;

#pragma GCC diagnostic pop
#pragma GCC pop_options

// ---------------------------------------------------------------------------------------------
// Seeds.
std::string point_key(const ConePoint& p) {
  std::string key = "cone;model=" + to_string(p.model) + ";d=" + std::to_string(p.d) + ";T=" + std::to_string(p.T) +
                    ";heads=" + std::to_string(p.heads);
  switch (p.model) {
    case ValueModel::axis: key += ";mu=" + fmt17(p.mu) + ";sigma=" + fmt17(p.sigma); break;
    case ValueModel::cap: key += ";theta=" + fmt17(p.theta); break;
    case ValueModel::gauss: key += ";m=" + fmt17(p.m) + ";sigma=" + fmt17(p.sigma); break;
  }
  return key;
}

std::uint64_t point_seed(const ConePoint& p, std::uint64_t base_seed) {
  return derive_seed(base_seed, point_key(p), 0);
}

// ---------------------------------------------------------------------------------------------
// The simulation.
namespace {

constexpr int kTrialsPerBlock = 64;  // fixed, so blocks (and the merge order) never depend on threads
// Blocks computed in parallel between two ordered merges: as many as ~32 MiB of block sums allow
// (the result does not depend on it, only the idle time at the wave barrier does).
constexpr std::int64_t kWaveBytes = std::int64_t{32} << 20;
constexpr std::int64_t kChunkFloats = 16384;  // value vectors generated at once (64 KiB, stays in L2)
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

// One head of kLanes sequences over nt steps (lane l of step s at s * kLanes + l): the running
// sum's axis component a += m + sigma z1; the squared norm of the rest R2 <- (sqrt(R2) + sigma g)^2
// + c, c = sigma^2 chi-square(k-2); then ns += a^2 + R2 and ax += a (for the first head, First:
// ns = a^2 + R2 and ax = a). a, r2: the state, in and out.
// (Written out for AVX-512: GCC keeps std::sqrt scalar, as it may set errno.)
template <bool First>
void radial_head(double* __restrict a, double* __restrict r2, const float* __restrict z1, const float* __restrict g,
                 const double* __restrict c, double* __restrict ns, double* __restrict ax, int nt, double m,
                 double sigma) {
#if defined(__AVX512F__)
  constexpr int kVecs = kLanes / 8;
  const __m512d vm = _mm512_set1_pd(m), vs = _mm512_set1_pd(sigma);
  __m512d A[kVecs], R[kVecs];
  for (int v = 0; v < kVecs; ++v) {
    A[v] = _mm512_loadu_pd(a + 8 * v);
    R[v] = _mm512_loadu_pd(r2 + 8 * v);
  }
  for (int s = 0; s < nt; ++s, z1 += kLanes, g += kLanes, c += kLanes, ns += kLanes, ax += kLanes) {
    for (int v = 0; v < kVecs; ++v) {
      const __m512d zv = _mm512_cvtps_pd(_mm256_loadu_ps(z1 + 8 * v)), gv = _mm512_cvtps_pd(_mm256_loadu_ps(g + 8 * v));
      A[v] = _mm512_add_pd(A[v], _mm512_fmadd_pd(vs, zv, vm));
      const __m512d t = _mm512_fmadd_pd(vs, gv, _mm512_sqrt_pd(R[v]));
      R[v] = _mm512_fmadd_pd(t, t, _mm512_loadu_pd(c + 8 * v));
      const __m512d q = _mm512_fmadd_pd(A[v], A[v], R[v]);
      if constexpr (First) {
        _mm512_storeu_pd(ns + 8 * v, q);
        _mm512_storeu_pd(ax + 8 * v, A[v]);
      } else {
        _mm512_storeu_pd(ns + 8 * v, _mm512_add_pd(_mm512_loadu_pd(ns + 8 * v), q));
        _mm512_storeu_pd(ax + 8 * v, _mm512_add_pd(_mm512_loadu_pd(ax + 8 * v), A[v]));
      }
    }
  }
  for (int v = 0; v < kVecs; ++v) {
    _mm512_storeu_pd(a + 8 * v, A[v]);
    _mm512_storeu_pd(r2 + 8 * v, R[v]);
  }
#else
  for (int s = 0; s < nt; ++s, z1 += kLanes, g += kLanes, c += kLanes, ns += kLanes, ax += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      a[l] += m + sigma * static_cast<double>(z1[l]);
      const double t = std::sqrt(r2[l]) + sigma * static_cast<double>(g[l]);
      r2[l] = t * t + c[l];
      ns[l] = (First ? 0.0 : ns[l]) + (a[l] * a[l] + r2[l]);
      ax[l] = (First ? 0.0 : ax[l]) + a[l];
    }
  }
#endif
}

// Marsaglia-Tsang on nb candidates (x normal, u uniform; nb a multiple of 8): v^3 of the accepted
// ones, in order, to chi (room for nb); returns their number. See Simulator::chi2_fill for the
// test; q = c^2/12 is the factor of the second squeeze.
int marsaglia_tsang(const float* xs, const float* us, int nb, double c, double d, double q, double* chi) {
  auto exact = [&](double x, double u, double v3) {
    return v3 > 0.0 && std::log(u) < 0.5 * x * x + d * (1.0 - v3 + std::log(v3));
  };
  int k = 0;
#if defined(__AVX512F__)
  const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd(), vc = _mm512_set1_pd(c);
  const __m512d mt = _mm512_set1_pd(0.0331), vq = _mm512_set1_pd(q);
  for (int i = 0; i < nb; i += 8) {
    const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(xs + i)), u = _mm512_cvtps_pd(_mm256_loadu_ps(us + i));
    const __m512d v = _mm512_fmadd_pd(vc, x, one), v3 = _mm512_mul_pd(_mm512_mul_pd(v, v), v);
    const __m512d x2 = _mm512_mul_pd(x, x), x4 = _mm512_mul_pd(x2, x2);
    const __mmask8 positive = _mm512_cmp_pd_mask(v, zero, _CMP_GT_OQ);
    const __mmask8 squeeze1 = _mm512_cmp_pd_mask(u, _mm512_fnmadd_pd(mt, x4, one), _CMP_LT_OQ);
    const __mmask8 squeeze2 = _mm512_cmp_pd_mask(_mm512_mul_pd(_mm512_sub_pd(one, u), _mm512_min_pd(one, v)),
                                                 _mm512_mul_pd(vq, x4), _CMP_GT_OQ);
    __mmask8 ok = positive & (squeeze1 | squeeze2);
    if (const unsigned rest = positive & ~ok & 0xffu) {  // rare: decide by the logarithms
      alignas(64) double v3s[8];
      _mm512_store_pd(v3s, v3);
      for (int j = 0; j < 8; ++j)
        if (((rest >> j) & 1u) && exact(xs[i + j], us[i + j], v3s[j])) ok = static_cast<__mmask8>(ok | (1u << j));
    }
    _mm512_storeu_pd(chi + k, _mm512_maskz_compress_pd(ok, v3));
    k += __builtin_popcount(ok);
  }
#else
  for (int i = 0; i < nb; ++i) {
    const double x = xs[i], u = us[i], v = 1.0 + c * x, v3 = v * v * v, x4 = x * x * x * x;
    const bool ok = v > 0.0 && (u < 1.0 - 0.0331 * x4 || (1.0 - u) * std::min(1.0, v) > q * x4 || exact(x, u, v3));
    chi[k] = v3;
    k += ok ? 1 : 0;
  }
#endif
  return k;
}

// Over nt steps of kLanes sequences (index s * kLanes + l): n2 = ns / den2[s] (||o_t||^2, the
// same division as the full-vector path), and mx[l] = max(mx[l], n2) over the steps from s0 on.
void radial_n2(const double* __restrict ns, const double* __restrict den2, int nt, int s0, double* __restrict n2,
               double* __restrict mx) {
#if defined(__AVX512F__)
  // Written out: GCC vectorises the plain loops across steps with transposes, and calls std::max.
  constexpr int kVecs = kLanes / 8;
  __m512d M[kVecs];
  for (int v = 0; v < kVecs; ++v) M[v] = _mm512_loadu_pd(mx + 8 * v);
  for (int s = 0; s < nt; ++s) {
    const __m512d den = _mm512_set1_pd(den2[s]);
    for (int v = 0; v < kVecs; ++v) {
      const __m512d q = _mm512_div_pd(_mm512_loadu_pd(ns + s * kLanes + 8 * v), den);
      _mm512_storeu_pd(n2 + s * kLanes + 8 * v, q);
      if (s >= s0) M[v] = _mm512_max_pd(M[v], q);  // no NaN here: the same as std::max
    }
  }
  for (int v = 0; v < kVecs; ++v) _mm512_storeu_pd(mx + 8 * v, M[v]);
#else
  for (int s = 0; s < nt; ++s) {
    for (int l = 0; l < kLanes; ++l) {
      const double q = ns[s * kLanes + l] / den2[s];
      n2[s * kLanes + l] = q;
      if (s >= s0 && mx[l] < q) mx[l] = q;
    }
  }
#endif
}

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
  Eigen::VectorXf normals;  // (CH*d) standard normals of one chunk
  Vec chunk;                // (CH*d) value vectors of the chunk (aliases `normals` for float)
  Vec sum;                  // (d) running sum of value vectors
  Eigen::ArrayXd ns;        // (T) ||sum_t||^2
  Eigen::ArrayXd ax;        // (T) <sum_t, (u_1..u_H)> (unnormalised axis)
  Eigen::ArrayXd n2;        // (T) ||o_t||^2
  Eigen::ArrayXXd x;        // (P, kRows) this trial's quantities
  Eigen::ArrayXd g_ns, g_ax;  // (P) sqrt(ns) and ax gathered at the requested positions
  // The radial estimator (gauss): kLanes sequences at once; CT = steps per chunk.
  std::vector<RadialLane> lanes;  // (kLanes)
  Eigen::ArrayXf rz;              // (2*CT*H*kLanes) z1 then g, index (head * CT + step) * kLanes + lane
  Eigen::ArrayXd rc;              // (CT*H*kLanes) sigma^2 chi-square(k-2), same index
  Eigen::ArrayXd rns, rax, rn2;   // (CT*kLanes) per step: ||S||^2, the axis sum (over heads), ||o||^2
  Eigen::ArrayXd ra, rr2;         // (H*kLanes) the chain's state a, R2
  Eigen::ArrayXd out_ns, out_ax, out_n2;  // (P*kLanes) ns, ax, n2 at the requested positions, lane-minor
  Eigen::ArrayXf tmp;             // (max(2*CT*H, H, 128)) one lane's normals
  Eigen::ArrayXf tmp_u;           // (128) one lane's uniforms
  Eigen::ArrayXd tmp_c;           // (H) bidirectional chi-squares
  std::array<double, kLanes> n0sq{};
  std::array<bool, kLanes> largest{};
  Scalar* values() { return std::is_same_v<Scalar, float> ? reinterpret_cast<Scalar*>(normals.data()) : chunk.data(); }
};

class Simulator {
 public:
  Simulator(const ConePoint& p, const std::vector<int>& positions, const McOptions& opt)
      : p_(p), pos_(positions), opt_(opt), seed_(point_seed(p, opt.seed)), k_(p.d / p.heads),
        P_(static_cast<Eigen::Index>(positions.size())), radial_(opt.estimator == McEstimator::radial) {
    chunk_vectors_ = std::max<std::int64_t>(1, std::min<std::int64_t>(p.T, kChunkFloats / p.d));
    offset_.setZero(p.d);
    for (int h = 0; h < p.heads; ++h) offset_[h * k_] = static_cast<float>(p.m);
    den2_.resize(p.T);  // (T) squared divisor of the prefix sum
    for (int t = 0; t < p.T; ++t) {
      const double den = p.mask == AttnMask::causal ? t + 1.0 : static_cast<double>(p.T);
      den2_[t] = den * den;
    }
    slot_.assign(static_cast<std::size_t>(p.T), -1);
    for (Eigen::Index i = 0; i < P_; ++i) slot_[static_cast<std::size_t>(positions[static_cast<std::size_t>(i)])] = static_cast<int>(i);
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

  McResult run();

 private:
  template <typename Scalar>
  void init(Workspace<Scalar>& w) const {
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
  template <typename Mat>
  void transform(Mat& vs, PhiloxStream& uni) const;  // normals -> value vectors, in place
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
  std::vector<int> slot_;  // (T) index of position t among the requested ones, or -1
  int radial_steps_ = 1;   // radial: steps per chunk (CT)
  int chi_df_ = 0;         // radial: degrees of freedom of the chi-square added to R2 per draw
  double mt_d_ = 0.0, mt_c_ = 0.0;  // radial, chi_df_ >= 2: Marsaglia-Tsang's d = df/2 - 1/3, c = 1/sqrt(9d)
  Eigen::ArrayXd den2_;
  Eigen::VectorXf offset_;  // (d) gauss: m at each head's axis coordinate, 0 elsewhere
  // Global accumulators, merged in block order.
  std::vector<RunningStats> acc_[kRows];
  std::vector<Moments4> acc_m4_;
  RunningStats acc_largest_;
};

template <typename Mat>
void Simulator::transform(Mat& vs, PhiloxStream& uni) const {
  // vs: (d, nv) standard normals in, value vectors out.
  using Scalar = typename Mat::Scalar;
  const Eigen::Index nv = vs.cols();
  const Scalar sigma = static_cast<Scalar>(p_.sigma);
  switch (p_.model) {
    case ValueModel::gauss: {
      // v = m u + sigma z per head.
      vs *= sigma;
      const Scalar m = static_cast<Scalar>(p_.m);
      for (int h = 0; h < p_.heads; ++h) vs.row(h * k_).array() += m;
      break;
    }
    case ValueModel::axis: {
      // v = mu u + sigma s, s = normalised Gaussian in the (k-1)-dim complement of u. For k = 2
      // that sphere is {-1, +1}: take the sign exactly, so vectors with equal signs are equal
      // floats and the ties that the closed form counts (probability 2^-t) stay ties.
      for (Eigen::Index j = 0; j < nv; ++j) {
        for (int h = 0; h < p_.heads; ++h) {
          auto rest = vs.col(j).segment(h * k_ + 1, k_ - 1);
          if (k_ == 2)
            rest[0] = std::copysign(sigma, rest[0]);
          else
            rest *= sigma / std::sqrt(rest.squaredNorm());
          vs(h * k_, j) = static_cast<Scalar>(p_.mu);
        }
      }
      break;
    }
    case ValueModel::cap: {
      // x = <v,u> by the exact inverse CDF; the rest uniform in the complement with norm sqrt(1-x^2).
      for (Eigen::Index j = 0; j < nv; ++j) {
        for (int h = 0; h < p_.heads; ++h) {
          // The same draw as cap_cos_quantile, with 1 - x^2 computed directly (tiny theta).
          const detail::CapDraw draw = detail::cap_quantile_draw(k_, p_.theta, uni.uniform());
          auto rest = vs.col(j).segment(h * k_ + 1, k_ - 1);
          rest *= static_cast<Scalar>(std::sqrt(draw.r2 / static_cast<double>(rest.squaredNorm())));
          vs(h * k_, j) = static_cast<Scalar>(draw.x);
        }
      }
      break;
    }
  }
}

void Simulator::prefix_gauss(Workspace<float>& w, int nv, int t0) const {
  // One pass per vector: v = sigma z + m u, running sum S += v written over z, ||S||^2 and the
  // axis projection. 16 independent partial sums so the compiler vectorises the squared norm
  // without reassociating (no -ffast-math); they are added in a fixed order.
  const int d = p_.d;
  const float sigma = static_cast<float>(p_.sigma);
  const float* off = offset_.data();  // (d) m at each head's axis coordinate, 0 elsewhere
  const float* prev = w.sum.data();   // (d) sum up to the previous vector
  float* z = w.normals.data();        // (nv,d) normals in, prefix sums out
  for (int j = 0; j < nv; ++j, prev = z, z += d) {
    alignas(64) float acc[16] = {};
    int i = 0;
    for (; i + 16 <= d; i += 16) {
      for (int l = 0; l < 16; ++l) {
        const float s = prev[i + l] + (sigma * z[i + l] + off[i + l]);
        z[i + l] = s;
        acc[l] += s * s;
      }
    }
    float total = 0.0f;
    for (; i < d; ++i) {
      const float s = prev[i] + (sigma * z[i] + off[i]);
      z[i] = s;
      total += s * s;
    }
    for (int width = 8; width >= 1; width /= 2)  // pairwise, so no 16-long chain of dependent adds
      for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
    total += acc[0];
    float a = 0.0f;
    for (int h = 0; h < p_.heads; ++h) a += z[h * k_];
    w.ns[t0 + j] = static_cast<double>(total);
    w.ax[t0 + j] = static_cast<double>(a);
  }
  std::memcpy(w.sum.data(), prev, sizeof(float) * static_cast<std::size_t>(d));
}

template <typename Scalar>
bool Simulator::trial(std::int64_t index, Workspace<Scalar>& w) const {
  const int T = p_.T, d = p_.d;
  NormalStream gen(seed_, static_cast<std::uint64_t>(index));
  PhiloxStream uni(seed_ + kCapStreamTag, static_cast<std::uint64_t>(index));
  w.sum.setZero();
  const bool causal = p_.mask == AttnMask::causal;
  for (int t0 = 0; t0 < T; t0 += static_cast<int>(chunk_vectors_)) {
    const int nv = static_cast<int>(std::min<std::int64_t>(chunk_vectors_, T - t0));
    gen.fill(w.normals.data(), static_cast<std::int64_t>(nv) * d);
    if constexpr (std::is_same_v<Scalar, float>) {
      if (causal) {  // the fast path: gauss, float32
        prefix_gauss(w, nv, t0);
        continue;
      }
    }
    if constexpr (!std::is_same_v<Scalar, float>)
      w.chunk.head(static_cast<Eigen::Index>(nv) * d) = w.normals.head(static_cast<Eigen::Index>(nv) * d).template cast<Scalar>();
    Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>> vs(w.values(), d, nv);  // (d, nv) vectors t0 .. t0+nv-1
    transform(vs, uni);
    if (causal) {  // prefix sums in place: column j becomes sum_{i <= t0+j} v_i
      vs.col(0) += w.sum;
      for (int j = 1; j < nv; ++j) vs.col(j) += vs.col(j - 1);
      w.sum = vs.col(nv - 1);
      w.ns.segment(t0, nv) = vs.colwise().squaredNorm().transpose().template cast<double>().array();
      w.ax.segment(t0, nv) = vs.row(0).transpose().template cast<double>().array();
      for (int h = 1; h < p_.heads; ++h) w.ax.segment(t0, nv) += vs.row(h * k_).transpose().template cast<double>().array();
    } else {
      w.sum += vs.rowwise().sum();
    }
  }
  if (!causal) {  // every position sees the same average over all T vectors
    double a = 0.0;
    for (int h = 0; h < p_.heads; ++h) a += static_cast<double>(w.sum[h * k_]);
    w.ns.setConstant(static_cast<double>(w.sum.squaredNorm()));
    w.ax.setConstant(a);
  }
  w.n2 = w.ns / den2_;  // (T) ||o_t||^2
  for (Eigen::Index i = 0; i < P_; ++i) {
    const int t = pos_[static_cast<std::size_t>(i)];
    w.x(i, kNormSq) = w.n2[t];
    w.g_ns[i] = w.ns[t];
    w.g_ax[i] = w.ax[t];
  }
  const double n0sq = w.n2[0];
  quantities(w, n0sq);
  return T == 1 || (w.n2.tail(T - 1) < n0sq).all();
}

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

void Simulator::chi2_fill(RadialLane& lane, Workspace<float>& w, double* out, int n, int stride) const {
  // n draws of sigma^2 chi-square(chi_df_) from the lane's streams to out[0], out[stride], ...:
  // 0 (df 0), z^2 (df 1), else 2 Gamma(df/2) by Marsaglia-Tsang: candidate d v^3, v = 1 + c x with
  // x normal, u uniform, accepted iff v > 0 and ln u < x^2/2 + d (1 - v^3 + ln v^3) =: R. Squeezes
  // decide most candidates without a logarithm: Marsaglia-Tsang's u < 1 - 0.0331 x^4, and a tighter
  // one for large shapes: with e = c x, R = d g(e), g(e) = 3 ln(1+e) - 3e + 3e^2/2 - e^3 (as
  // 9 d c^2 = 1), g'(e) = -3 e^3/(1+e), so g(e) >= -3 e^4 / (4 min(1, v)) and R >= -(c^2/12) x^4 /
  // min(1, v); as ln u <= u - 1, u < 1 - (c^2/12) x^4 / min(1, v) implies acceptance. Candidates
  // are i.i.d., so the accepted ones in stream order are i.i.d. Gamma; those a batch makes beyond
  // the need wait in lane.chi for the next call.
  const double s2 = p_.sigma * p_.sigma;
  if (chi_df_ == 0) {
    for (int i = 0; i < n; ++i) out[static_cast<std::ptrdiff_t>(i) * stride] = 0.0;
    return;
  }
  if (chi_df_ == 1) {
    float* z = w.tmp.data();
    lane.normal.fill(z, n);
    for (int i = 0; i < n; ++i) {
      const double x = z[i];
      out[static_cast<std::ptrdiff_t>(i) * stride] = s2 * (x * x);
    }
    return;
  }
  const double d = mt_d_, c = mt_c_, scale = 2.0 * mt_d_ * s2;
  const double q = c * c / 12.0 * (1.0 + 1e-12);  // the squeeze's x^4 factor, rounded to the safe side
  for (int got = 0; got < n;) {
    if (lane.chi_at == lane.chi_end) {
      // A batch a little larger than what is still needed (acceptance > 95% for shape >= 1).
      const int need = n - got, nb = std::min(kNormalsPerCall, (need + need / 16 + 9) / 8 * 8);
      lane.normal.fill(w.tmp.data(), nb);
      lane.uniform.fill(w.tmp_u.data(), nb);
      const int k = marsaglia_tsang(w.tmp.data(), w.tmp_u.data(), nb, c, d, q, lane.chi);
      lane.chi_at = 0;
      lane.chi_end = k;
      continue;
    }
    const int take = std::min(lane.chi_end - lane.chi_at, n - got);
    for (int j = 0; j < take; ++j) out[static_cast<std::ptrdiff_t>(got + j) * stride] = scale * lane.chi[lane.chi_at + j];
    lane.chi_at += take;
    got += take;
  }
}

void Simulator::radial_group(std::int64_t first, int nl, Workspace<float>& w) const {
  const int H = p_.heads, T = p_.T;
  const double m = p_.m, sigma = p_.sigma;
  for (int l = 0; l < nl; ++l) {
    RadialLane& lane = w.lanes[static_cast<std::size_t>(l)];
    const auto index = static_cast<std::uint64_t>(first + l);
    lane.normal = NormalStream(seed_ + kRadialNormalTag, index);
    lane.uniform = UniformStream(seed_ + kRadialUniformTag, index);
    lane.chi_at = lane.chi_end = 0;
  }
  if (p_.mask == AttnMask::bidirectional) {
    // Every position sees the total over all T vectors: per head a = T m + sigma sqrt(T) z and
    // R2 = T sigma^2 chi-square(k-1), drawn directly.
    const double dT = static_cast<double>(T), sqrt_T = std::sqrt(dT);
    for (int l = 0; l < nl; ++l) {
      RadialLane& lane = w.lanes[static_cast<std::size_t>(l)];
      chi2_fill(lane, w, w.tmp_c.data(), H, 1);
      lane.normal.fill(w.tmp.data(), H);
      double ns = 0.0, ax = 0.0;
      for (int h = 0; h < H; ++h) {
        const double a = dT * m + sigma * sqrt_T * static_cast<double>(w.tmp[h]);
        ns += a * a + dT * w.tmp_c[h];
        ax += a;
      }
      const double n2 = ns / den2_[0];  // den2 is T^2 everywhere
      for (Eigen::Index i = 0; i < P_; ++i) {
        w.out_ns[i * kLanes + l] = ns;
        w.out_ax[i * kLanes + l] = ax;
        w.out_n2[i * kLanes + l] = n2;
      }
      w.n0sq[static_cast<std::size_t>(l)] = n2;
      w.largest[static_cast<std::size_t>(l)] = T == 1;
    }
    return;
  }
  // Causal: the chain, CT steps at a time. Lanes >= nl (a partial last group) run on zeros.
  const int CT = radial_steps_;
  const Eigen::Index G = kLanes;
  w.ra.setZero();
  w.rr2.setZero();
  if (nl < kLanes) {
    w.rz.setZero();
    w.rc.setZero();
  }
  std::array<double, kLanes> mx;
  mx.fill(-std::numeric_limits<double>::infinity());
  for (int t0 = 0; t0 < T; t0 += CT) {
    const int nt = std::min(CT, T - t0), nv = nt * H;
    for (int l = 0; l < nl; ++l) {
      RadialLane& lane = w.lanes[static_cast<std::size_t>(l)];
      lane.normal.fill(w.tmp.data(), 2 * nv);  // z1 of (head, step) h * nt + s, then g
      for (int j = 0; j < 2 * nv; ++j) w.rz[j * G + l] = w.tmp[j];
      chi2_fill(lane, w, w.rc.data() + l, nv, kLanes);
    }
    for (int h = 0; h < H; ++h)
      (h == 0 ? radial_head<true> : radial_head<false>)(w.ra.data() + h * G, w.rr2.data() + h * G,
                                                        w.rz.data() + h * nt * G, w.rz.data() + (nv + h * nt) * G,
                                                        w.rc.data() + h * nt * G, w.rns.data(), w.rax.data(), nt, m, sigma);
    // ||o_0||^2 itself is not a competitor of position 0.
    radial_n2(w.rns.data(), den2_.data() + t0, nt, t0 == 0 ? 1 : 0, w.rn2.data(), mx.data());
    if (t0 == 0)
      for (int l = 0; l < kLanes; ++l) w.n0sq[static_cast<std::size_t>(l)] = w.rn2[l];
    for (int s = 0; s < nt; ++s) {
      const int slot = slot_[static_cast<std::size_t>(t0 + s)];
      if (slot < 0) continue;
      w.out_ns.segment(slot * G, G) = w.rns.segment(s * G, G);
      w.out_ax.segment(slot * G, G) = w.rax.segment(s * G, G);
      w.out_n2.segment(slot * G, G) = w.rn2.segment(s * G, G);
    }
  }
  for (int l = 0; l < kLanes; ++l)  // T == 1: -inf < ||o_0||^2
    w.largest[static_cast<std::size_t>(l)] = mx[static_cast<std::size_t>(l)] < w.n0sq[static_cast<std::size_t>(l)];
}

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

McResult Simulator::run() {
  for (auto& a : acc_) a.assign(static_cast<std::size_t>(P_), RunningStats{});
  acc_m4_.assign(static_cast<std::size_t>(P_), Moments4{});
  const std::int64_t nblocks = (opt_.trials + kTrialsPerBlock - 1) / kTrialsPerBlock;
  const std::int64_t slot_bytes = (3 * kRows + 2) * static_cast<std::int64_t>(sizeof(double)) * std::max<Eigen::Index>(P_, 1);
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
  auto worker = [&] {
    if (p_.model == ValueModel::gauss)
      work.template operator()<float>();
    else
      work.template operator()<double>();
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < nthreads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
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

}  // namespace

std::string to_string(McEstimator e) { return e == McEstimator::radial ? "radial" : "full"; }

void validate_estimator(const ConePoint& p, McEstimator e) {
  if (e == McEstimator::radial && p.model != ValueModel::gauss)
    throw UsageError("--estimator", "radial needs --model gauss, got " + to_string(p.model));
}

McResult simulate(const ConePoint& p, const std::vector<int>& positions, const McOptions& opt) {
  validate(p);
  validate_estimator(p, opt.estimator);
  if (opt.trials < 2) throw UsageError("--trials", "must be at least 2");
  if (opt.threads < 1) throw UsageError("--threads", "must be at least 1");
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (positions[i] < 0 || positions[i] >= p.T)
      throw UsageError("--positions", "position " + std::to_string(positions[i]) + " outside 0.." +
                                          std::to_string(p.T - 1));
    for (std::size_t j = 0; j < i; ++j)
      if (positions[j] == positions[i]) throw UsageError("--positions", "position listed twice");
  }
  Simulator sim(p, positions, opt);
  return sim.run();
}

}  // namespace p0sim::theory
