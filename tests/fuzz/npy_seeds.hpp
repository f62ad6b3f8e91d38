#pragma once
// The NPY fuzz target's seed corpus, made by the project's own writer (sim::npy_bytes) instead of
// kept as binary files: one accepted input per dtype and rank (empty, scalar, vector, matrix,
// tokens), and one the reader must reject (Fortran order). tests/cli_fuzz_corpus.cpp replays them
// in every g++ build; scripts/fuzz.sh writes them to disk with npy_seeds (npy_seeds.cpp).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/npy.hpp"

namespace p0sim::fuzz {

struct NpySeed {
  std::string name;   // file name in the corpus
  std::string bytes;  // the whole file
  bool accepted;      // whether sim::parse_npy must accept it
};

inline std::vector<NpySeed> npy_seed_corpus() {
  std::vector<float> f4(64);
  for (std::size_t i = 0; i < f4.size(); ++i) f4[i] = 0.25f * static_cast<float>(i) - 3.0f;
  const double f8 = -1.5;
  const std::vector<std::int32_t> i4{0, 5, 9, 63, 1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> i8{7, 0, 63};
  std::string fortran = sim::npy_bytes("<f4", f4.data(), {2});
  const std::string c_order = "'fortran_order': False,";
  fortran.replace(fortran.find(c_order), c_order.size(), "'fortran_order': True, ");  // same length
  return {{"f4_empty.npy", sim::npy_bytes("<f4", f4.data(), {0, 4}), true},
          {"f4_matrix.npy", sim::npy_bytes("<f4", f4.data(), {8, 8}), true},
          {"f4_vector.npy", sim::npy_bytes("<f4", f4.data(), {8}), true},
          {"f8_scalar.npy", sim::npy_bytes("<f8", &f8, {}), true},
          {"i4_tokens.npy", sim::npy_bytes("<i4", i4.data(), {2, 5}), true},
          {"i8_tokens.npy", sim::npy_bytes("<i8", i8.data(), {1, 3}), true},
          {"fortran.npy", std::move(fortran), false}};
}

}  // namespace p0sim::fuzz
