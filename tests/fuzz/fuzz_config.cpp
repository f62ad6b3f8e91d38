// libFuzzer target: the --config path (CLI11's TOML reader and our application of it) and the
// experiment TOML reader, on arbitrary bytes (see fuzz_inputs.hpp).
#include "tests/fuzz/fuzz_inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The file-based reader needs a file; one per process, rewritten for every input.
  static const std::string scratch = "/tmp/p0sim_fuzz_config_" + std::to_string(::getpid()) + ".toml";
  p0sim::fuzz::config_one_input(std::string(reinterpret_cast<const char*>(data), size), scratch);
  return 0;
}
