// Writes the NPY fuzz target's seed corpus (npy_seeds.hpp) into DIR for libFuzzer (scripts/fuzz.sh).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/fuzz/npy_seeds.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: npy_seeds DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  for (const auto& seed : p0sim::fuzz::npy_seed_corpus()) {
    std::ofstream out(dir / seed.name, std::ios::binary);
    out.write(seed.bytes.data(), static_cast<std::streamsize>(seed.bytes.size()));
    if (!out) {
      std::fprintf(stderr, "npy_seeds: cannot write %s\n", (dir / seed.name).c_str());
      return 1;
    }
  }
  return 0;
}
