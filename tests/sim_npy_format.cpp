// NPY files follow the NumPy format specification (version 1.0, little endian, C order) and
// anything else is rejected with a message naming the file.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/test_support.hpp"
#include "common/errors.hpp"
#include "sim/npy.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_npy_format_test {

namespace fs = std::filesystem;
using p0sim::sim::read_npy;
using p0sim::sim::write_npy;

namespace {

const p0sim::test::ScratchRoot kScratch("p0sim_npy_test_");

fs::path scratch(const std::string& name) { return kScratch.file(name); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A Python with NumPy: Debian's /usr/bin/python3 first (a pyenv python3 on PATH may lack it).
std::string python_with_numpy() {
  for (std::string py : {"/usr/bin/python3", "python3"})
    if (std::system((py + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0) return py;
  return {};
}

}  // namespace

TEST_CASE("npy float32 and int32 arrays round-trip exactly", "[npy]") {
  std::vector<float> f = {1.5f, -0.0f, 3.25e-30f, 7.0f, -1e30f, 0.1f};
  const fs::path pf = scratch("f.npy");
  write_npy(pf, f.data(), {2, 3});
  auto a = read_npy(pf);
  CHECK(a.dtype == "<f4");
  CHECK(a.shape == std::vector<std::int64_t>{2, 3});
  CHECK(a.as_float() == f);
  CHECK(slurp(pf).find("NUMPY") == 1);
  CHECK((slurp(pf).size() - 6 * 4) % 64 == 0);  // data starts at a multiple of 64

  std::vector<std::int32_t> i = {0, -1, 2147483647, 5};
  const fs::path pi = scratch("i.npy");
  write_npy(pi, i.data(), {4});
  auto b = read_npy(pi);
  CHECK(b.dtype == "<i4");
  CHECK(b.shape == std::vector<std::int64_t>{4});
  CHECK(b.as_int64() == std::vector<std::int64_t>{0, -1, 2147483647, 5});

  const fs::path p0 = scratch("scalar.npy");
  write_npy(p0, f.data(), {});
  CHECK(read_npy(p0).as_float() == std::vector<float>{1.5f});
  // No temporary file is left next to the result.
  for (const auto& e : fs::directory_iterator(pf.parent_path())) CHECK(e.path().filename().string()[0] != '.');
}

TEST_CASE("npy files match numpy.save byte for byte and numpy files load", "[npy]") {
  const std::string py = python_with_numpy();
  if (py.empty()) {
    WARN("python3 with numpy not found: NumPy byte comparison skipped");
    return;
  }
  const fs::path ours_f = scratch("ours_f.npy"), ours_i = scratch("ours_i.npy"), ours_1 = scratch("ours_1.npy");
  const fs::path np_f = scratch("np_f.npy"), np_i = scratch("np_i.npy"), np_1 = scratch("np_1.npy");
  const fs::path np_f8 = scratch("np_f8.npy"), np_i8 = scratch("np_i8.npy");
  std::vector<float> f(2 * 3 * 5);
  for (std::size_t k = 0; k < f.size(); ++k) f[k] = static_cast<float>(k) * 0.25f - 3.0f;
  std::vector<std::int32_t> i(7 * 2);
  for (std::size_t k = 0; k < i.size(); ++k) i[k] = static_cast<std::int32_t>(k) * 3 - 10;
  write_npy(ours_f, f.data(), {2, 3, 5});
  write_npy(ours_i, i.data(), {7, 2});
  write_npy(ours_1, f.data(), {11});
  const std::string script =
      "import numpy as np; "
      "np.save('" +
      np_f.string() +
      "', (np.arange(30, dtype=np.float32) * 0.25 - 3).reshape(2, 3, 5)); "
      "np.save('" +
      np_i.string() +
      "', (np.arange(14, dtype=np.int32) * 3 - 10).reshape(7, 2)); "
      "np.save('" +
      np_1.string() +
      "', np.arange(11, dtype=np.float32) * 0.25 - 3); "
      "np.save('" +
      np_f8.string() +
      "', np.array([[0.5, -2.0]], dtype='<f8')); "
      "np.save('" +
      np_i8.string() + "', np.array([3, -4, 5], dtype='<i8'))";
  REQUIRE(std::system((py + " -c \"" + script + "\"").c_str()) == 0);
  CHECK(slurp(ours_f) == slurp(np_f));
  CHECK(slurp(ours_i) == slurp(np_i));
  CHECK(slurp(ours_1) == slurp(np_1));
  CHECK(read_npy(np_f8).as_float() == std::vector<float>{0.5f, -2.0f});
  CHECK(read_npy(np_i8).as_int64() == std::vector<std::int64_t>{3, -4, 5});
  // And NumPy reads ours back to the same values.
  const std::string check = "import numpy as np; a = np.load('" + ours_f.string() +
                            "'); assert a.dtype == np.float32 and a.shape == (2, 3, 5); "
                            "assert (a == (np.arange(30, dtype=np.float32) * 0.25 - 3).reshape(2, 3, 5)).all()";
  CHECK(std::system((py + " -c \"" + check + "\"").c_str()) == 0);
}

TEST_CASE("npy files outside the supported format are rejected naming the file", "[npy]") {
  std::vector<float> f = {1, 2, 3, 4, 5, 6};
  const fs::path good = scratch("good.npy");
  write_npy(good, f.data(), {2, 3});
  const std::string bytes = slurp(good);
  const std::size_t header_end = bytes.size() - 24;

  auto rejected = [&](const std::string& name, std::string content, const std::string& why) {
    const fs::path p = scratch(name);
    spit(p, content);
    CAPTURE(name);
    REQUIRE_THROWS_AS(read_npy(p), p0sim::UsageError);
    REQUIRE_THROWS_WITH(read_npy(p), Catch::Contains(p.string()) && Catch::Contains(why));
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string h = bytes.substr(0, header_end);
    const auto at = h.find(from);
    REQUIRE(at != std::string::npos);
    h.replace(at, from.size(), to);
    h.resize(header_end, ' ');  // keep the header length field right
    h.back() = '\n';
    return h + bytes.substr(header_end);
  };

  rejected("magic.npy", "\x92" + bytes.substr(1), "magic");
  rejected("v2.npy", bytes.substr(0, 6) + '\x02' + bytes.substr(7), "version 2.0");
  rejected("v3.npy", bytes.substr(0, 6) + '\x03' + bytes.substr(7), "version 3.0");
  rejected("fortran.npy", replaced("'fortran_order': False", "'fortran_order': True"), "fortran_order");
  rejected("bigendian.npy", replaced("'<f4'", "'>f4'"), "big-endian");
  rejected("u1.npy", replaced("'<f4'", "'|u1'"), "dtype");
  rejected("truncated.npy", bytes.substr(0, bytes.size() - 3), "truncated body");
  rejected("shape.npy", replaced("(2, 3)", "(2, 4)"), "truncated body");
  rejected("longer.npy", bytes + std::string(8, '\0'), "longer than shape");
  rejected("short_header.npy", bytes.substr(0, 40), "truncated header");
  rejected("empty.npy", "", "magic");
  REQUIRE_THROWS_WITH(read_npy(scratch("missing.npy")),
                      Catch::Contains("missing.npy") && Catch::Contains("cannot open"));
}

TEST_CASE("npy writes to an unwritable place fail as a run error", "[npy]") {
  std::vector<float> f = {1};
  REQUIRE_THROWS_AS(write_npy(scratch("no_such_dir") / "x.npy", f.data(), {1}), p0sim::RunError);
}

}  // namespace sim_npy_format_test
