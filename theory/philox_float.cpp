// The Philox normal and uniform generators (philox_float.hpp): Philox4x32-10 + Box-Muller, a
// scalar reference and its AVX-512 twin, which must agree to the bit.
#include "theory/philox_float.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace p0sim::theory {

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
  const __m512i even = _mm512_mul_epu32(a, m);                        // lanes 0,2,.. as 64-bit
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);  // lanes 1,3,..
  lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

// N batches of 16 Box-Muller pairs, each step applied to all N before the next, so the long
// dependency chains (log polynomial, sin/cos polynomials) of the batches overlap.
template <int N>
inline void box_muller16xN(const __m512i (&w1)[N], const __m512i (&w2)[N], float* const (&z1)[N],
                           float* const (&z2)[N]) {
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
    const __m512i b =
        _mm512_ternarylogic_epi32(_mm512_castps_si512(_mm512_mask_blend_ps(swap, s, c)), w2[i], signbit, 0x78);
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
      x1[v] = p1;                                                                      // lo1
      x2[v] = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p0, 32), x3[v], kk1, 0x96);  // hi0 ^ x3 ^ k1
      x3[v] = p0;                                                                      // lo0
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

}  // namespace p0sim::theory
