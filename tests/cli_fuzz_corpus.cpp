// Every input of the fuzz corpora (tests/fuzz_corpus/<target>/, seeds and any crash the fuzzers
// found) replayed through the fuzz targets' own code in the g++ build: each ends in acceptance or
// a UsageError, never a crash. Under the sanitize preset this runs with ASan and UBSan too.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/fuzz/fuzz_inputs.hpp"

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("the NPY fuzz corpus replays without a crash and the seeds are accepted", "[cli][fuzz]") {
  int files = 0, accepted = 0;
  for (const auto& e : fs::directory_iterator(fs::path(P0SIM_SOURCE_DIR) / "tests" / "fuzz_corpus" / "npy")) {
    CAPTURE(e.path().string());
    accepted += p0sim::fuzz::npy_one_input(slurp(e.path())) ? 1 : 0;
    ++files;
  }
  CHECK(files >= 7);
  CHECK(accepted >= 6);  // every seed but the Fortran-order one
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
