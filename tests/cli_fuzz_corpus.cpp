// Every input of the fuzz corpora (the NPY seeds of npy_seeds.hpp, the config seeds in
// tests/fuzz_corpus/config/, and any crash input saved under tests/fuzz_corpus/<target>/) replayed
// through the fuzz targets' own code in the g++ build: each ends in acceptance or a UsageError,
// never a crash. Under the sanitize preset this runs with ASan and UBSan too.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/fuzz/fuzz_inputs.hpp"
#include "tests/fuzz/npy_seeds.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace cli_fuzz_corpus_test {

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("the NPY fuzz seeds are accepted or rejected as meant and any saved input replays without a crash",
          "[cli][fuzz]") {
  const auto seeds = p0sim::fuzz::npy_seed_corpus();
  CHECK(seeds.size() == 7);
  for (const auto& seed : seeds) {
    CAPTURE(seed.name);
    CHECK(p0sim::fuzz::npy_one_input(seed.bytes) == seed.accepted);
  }
  // Inputs a fuzzer run found and someone saved (scripts/fuzz.sh says where): replayed, must not crash.
  const fs::path saved = fs::path(P0SIM_SOURCE_DIR) / "tests" / "fuzz_corpus" / "npy";
  if (fs::is_directory(saved))
    for (const auto& e : fs::directory_iterator(saved)) {
      CAPTURE(e.path().string());
      (void)p0sim::fuzz::npy_one_input(slurp(e.path()));
    }
}

TEST_CASE("the config fuzz corpus replays without a crash", "[cli][fuzz]") {
  const fs::path scratch = fs::temp_directory_path() / ("p0sim_fuzz_corpus_" + std::to_string(::getpid()) + ".toml");
  int files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(P0SIM_SOURCE_DIR) / "tests" / "fuzz_corpus" / "config")) {
    CAPTURE(e.path().string());
    p0sim::fuzz::config_one_input(slurp(e.path()), scratch.string());
    ++files;
  }
  fs::remove(scratch);
  CHECK(files >= 6);
  // The seeds that are valid configs are accepted by the reader they are written for.
  CHECK(p0sim::fuzz::config_file_one_input(P0SIM_SOURCE_DIR "/tests/fuzz_corpus/config/every_kind.toml"));
  CHECK(p0sim::fuzz::experiment_one_input(slurp(P0SIM_SOURCE_DIR "/tests/fuzz_corpus/config/p0sink_experiment.toml")));
}

}  // namespace cli_fuzz_corpus_test
