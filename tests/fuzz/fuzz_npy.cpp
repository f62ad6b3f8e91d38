// libFuzzer target: the NPY reader (sim/npy.cpp) on arbitrary bytes (see fuzz_inputs.hpp).
#include "tests/fuzz/fuzz_inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)p0sim::fuzz::npy_one_input(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
