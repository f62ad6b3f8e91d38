#pragma once
// Counter-based streams of float normals and uniforms for the cone model's Monte Carlo: a stream is
// (key, stream id), so a trial's numbers depend on its index only, never on the thread that drew them.
#include <cstdint>

namespace p0sim::theory {

// --- the normal generator --------------------------------------------------------------------
// Philox4x32-10 (Random123's constants, key = seed, counter = (block lo, block hi, stream lo,
// stream hi), as p0sim::PhiloxStream) evaluated for 32 blocks per call (AVX-512: four vectors of
// 8 blocks on 64-bit lanes, interleaved), then Box-Muller in float, 16 pairs per vector:
// radius from 23 bits of one word (u in (0,1), so |z| <= sqrt(48 ln 2) = 5.77, a tail of
// probability 8e-9 is cut), angle from the other word (2 bits pick the quadrant, 30 bits a
// uniform angle in [-pi/4, pi/4) that is never 0). Only exactly rounded operations (+, *, sqrt,
// int->float, bit logic) and no fused multiply-add, so the AVX-512 path and the scalar path give
// bit-identical numbers.
// Normals per call: 32 Philox blocks x 4 words, 2 words per 2 normals; out[64 s + l], out[64 s +
// 16 + l] come from words 0,1 of block block0 + 16 s + l, out[64 s + 32 + l], out[64 s + 48 + l]
// from its words 2,3.
inline constexpr int kNormalsPerCall = 128;

// kNormalsPerCall standard normals from Philox blocks block0 .. (block0 a multiple of 32).
void philox_normals(float* out, std::uint64_t key, std::uint64_t stream, std::uint64_t block0);
// The portable reference of the same function (used where AVX-512 is absent; tested equal).
void philox_normals_scalar(float* out, std::uint64_t key, std::uint64_t stream, std::uint64_t block0);
// Whether philox_normals runs the AVX-512 code.
bool philox_normals_vectorised();

// kNormalsPerCall uniforms on (0,1) from the same Philox blocks, 24 random bits each,
// ((w >> 8) + 1/2) 2^-24 (exact in float): out[64 s + 16 j + l] from word j of block
// block0 + 16 s + l (block0 a multiple of 32).
void philox_uniforms(float* out, std::uint64_t key, std::uint64_t stream, std::uint64_t block0);
void philox_uniforms_scalar(float* out, std::uint64_t key, std::uint64_t stream, std::uint64_t block0);

// A stream of the numbers `Generate` makes (kNormalsPerCall per call) for (key, stream): fill()
// continues where the last call stopped.
template <void (*Generate)(float*, std::uint64_t, std::uint64_t, std::uint64_t)>
class PhiloxFloatStream {
 public:
  PhiloxFloatStream() = default;
  PhiloxFloatStream(std::uint64_t key, std::uint64_t stream) : key_(key), stream_(stream) {}
  void fill(float* out, std::int64_t n);  // defined for the two streams below

 private:
  std::uint64_t key_ = 0;
  std::uint64_t stream_ = 0;
  std::uint64_t next_block_ = 0;
  int left_ = 0;  // unused numbers at the end of spare_
  alignas(64) float spare_[kNormalsPerCall];
};
using NormalStream = PhiloxFloatStream<philox_normals>;    // standard normals
using UniformStream = PhiloxFloatStream<philox_uniforms>;  // uniforms on (0,1)

}  // namespace p0sim::theory
