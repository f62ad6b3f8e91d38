#pragma once
// Counter-based random streams (Random123's Philox4x32-10). A stream is addressed by
// (seed, stream id); the numbers it yields depend only on those and on how many were drawn,
// never on threads or scheduling, so "trial i of point p" is reproducible anywhere.
#include <Random123/philox.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string_view>

namespace p0sim {

class PhiloxStream {
 public:
  using Philox = r123::Philox4x32;

  PhiloxStream(std::uint64_t seed, std::uint64_t stream) {
    key_ = {{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
    ctr_ = {{0u, 0u, static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)}};
  }

  std::uint32_t next_u32() {
    if (used_ == 4) refill();
    return block_[used_++];
  }
  std::uint64_t next_u64() {
    std::uint64_t hi = next_u32();
    return (hi << 32) | next_u32();
  }
  // Uniform on (0, 1): 53 random bits, never exactly 0 or 1 (safe for log and inverse CDFs).
  double uniform() { return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53; }
  // Uniform on (0, 1) in float precision: 24 random bits.
  float uniformf() { return (static_cast<float>(next_u32() >> 8) + 0.5f) * 0x1.0p-24f; }
  // Standard normal by Box-Muller; the second value of each pair is cached.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double radius = std::sqrt(-2.0 * std::log(uniform()));
    const double angle = 2.0 * std::numbers::pi * uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }
  // Uniform integer in [0, n) by rejection, so no modulo bias.
  std::uint32_t below(std::uint32_t n) {
    const std::uint32_t limit = static_cast<std::uint32_t>(-n) % n;  // 2^32 mod n
    for (;;) {
      std::uint64_t m = static_cast<std::uint64_t>(next_u32()) * n;
      if (static_cast<std::uint32_t>(m) >= limit) return static_cast<std::uint32_t>(m >> 32);
    }
  }

  // Position of the stream (blocks consumed, words used in the current block), for checkpoints.
  struct Position {
    std::uint64_t block;
    std::uint32_t used;
    bool has_spare;
    double spare;
  };
  Position position() const {
    return {(static_cast<std::uint64_t>(ctr_[1]) << 32) | ctr_[0], used_, has_spare_, spare_};
  }
  void seek(const Position& p) {
    // Counter of the block being consumed is block-1 when used < 4: re-derive it.
    std::uint64_t next_block = p.block;
    ctr_[0] = static_cast<std::uint32_t>(next_block);
    ctr_[1] = static_cast<std::uint32_t>(next_block >> 32);
    if (p.used < 4) {
      std::uint64_t cur = next_block - 1;
      Philox::ctr_type c = ctr_;
      c[0] = static_cast<std::uint32_t>(cur);
      c[1] = static_cast<std::uint32_t>(cur >> 32);
      block_ = Philox()(c, key_);
    }
    used_ = p.used;
    has_spare_ = p.has_spare;
    spare_ = p.spare;
  }

 private:
  void refill() {
    block_ = Philox()(ctr_, key_);
    if (++ctr_[0] == 0) ++ctr_[1];
    used_ = 0;
  }

  Philox::key_type key_{};
  Philox::ctr_type ctr_{};
  Philox::ctr_type block_{};
  std::uint32_t used_ = 4;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// Derives a child seed from (base seed, a canonical text key, an index) so that a point's seed
// depends on what the point is, not on where it stands in a list.
inline std::uint64_t derive_seed(std::uint64_t base, std::string_view key, std::uint64_t index) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the key
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  r123::Philox4x32 philox;
  r123::Philox4x32::ctr_type ctr = {{static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(h >> 32),
                                     static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32)}};
  r123::Philox4x32::key_type k = {{static_cast<std::uint32_t>(base), static_cast<std::uint32_t>(base >> 32)}};
  auto out = philox(ctr, k);
  return (static_cast<std::uint64_t>(out[0]) << 32) | out[1];
}

}  // namespace p0sim
