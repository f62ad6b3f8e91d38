#include "sim/npy.hpp"

#include <bit>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>

#include "common/errors.hpp"
#include "common/files.hpp"

namespace p0sim::sim {
namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little, "NPY I/O copies little-endian bytes as they are");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kPreamble = kMagicLen + 2 + 2;  // magic, version, uint16 header length
constexpr std::size_t kAlign = 64;                    // NumPy >= 1.18 aligns the data to 64 bytes

std::size_t item_size(const std::string& dtype) {
  if (dtype == "<f4" || dtype == "<i4") return 4;
  if (dtype == "<f8" || dtype == "<i8") return 8;
  return 0;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// The header exactly as numpy.save writes it, so files match NumPy's byte for byte.
std::string make_header(const std::string& dtype, const std::vector<std::int64_t>& shape) {
  std::string dict = "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  const std::size_t unpadded = kPreamble + dict.size() + 1;  // + the final newline
  dict.append((kAlign - unpadded % kAlign) % kAlign, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(dict.size() & 0xff));
  out.push_back(static_cast<char>(dict.size() >> 8));
  return out + dict;
}

// A small reader for the Python literal dict in the header: only what the spec allows.
struct HeaderParser {
  const std::string& s;
  std::size_t i = 0;
  const std::string& file;

  [[noreturn]] void fail(const std::string& why) const { throw UsageError(file, "not a supported NPY file: " + why); }
  void skip() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool accept(char c) {
    skip();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("malformed header (expected '") + c + "')");
  }
  std::string string_literal() {
    skip();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) fail("malformed header (expected a string)");
    const char q = s[i++];
    const std::size_t start = i;
    while (i < s.size() && s[i] != q) ++i;
    if (i >= s.size()) fail("malformed header (unterminated string)");
    return s.substr(start, i++ - start);
  }
  std::string word() {
    skip();
    const std::size_t start = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    return s.substr(start, i - start);
  }
  std::int64_t integer() {
    skip();
    const std::size_t start = i;
    std::int64_t v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("dimension too large");
      v = v * 10 + (s[i++] - '0');
    }
    if (start == i) fail("malformed shape");
    if (i < s.size() && s[i] == 'L') ++i;  // Python 2 long suffix
    return v;
  }
};

}  // namespace

std::int64_t NpyArray::size() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::vector<float> NpyArray::as_float() const {
  const auto n = static_cast<std::size_t>(size());
  std::vector<float> out(n);
  if (n == 0) return out;  // an empty array: memcpy may not be given the null data() of empty vectors
  if (dtype == "<f4") {
    std::memcpy(out.data(), bytes.data(), n * 4);
  } else if (dtype == "<f8") {
    for (std::size_t k = 0; k < n; ++k) {
      double v;
      std::memcpy(&v, bytes.data() + 8 * k, 8);
      out[k] = static_cast<float>(v);
    }
  } else {
    throw UsageError("npy", "dtype " + dtype + " is not a float type (expected <f4 or <f8)");
  }
  return out;
}

std::vector<std::int64_t> NpyArray::as_int64() const {
  const auto n = static_cast<std::size_t>(size());
  std::vector<std::int64_t> out(n);
  if (n == 0) return out;
  if (dtype == "<i8") {
    std::memcpy(out.data(), bytes.data(), n * 8);
  } else if (dtype == "<i4") {
    for (std::size_t k = 0; k < n; ++k) {
      std::int32_t v;
      std::memcpy(&v, bytes.data() + 4 * k, 4);
      out[k] = v;
    }
  } else {
    throw UsageError("npy", "dtype " + dtype + " is not an integer type (expected <i4 or <i8)");
  }
  return out;
}

NpyArray read_npy(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path.string(), "cannot open the file");
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_npy(content, path.string());
}

NpyArray parse_npy(const std::string& content, const std::string& file) {
  auto fail = [&](const std::string& why) -> UsageError {
    return UsageError(file, "not a supported NPY file: " + why);
  };
  if (content.size() < kPreamble || content.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
    throw fail("bad magic string (expected \\x93NUMPY)");
  const auto major = static_cast<unsigned char>(content[6]), minor = static_cast<unsigned char>(content[7]);
  if (major != 1 || minor != 0)
    throw fail("format version " + std::to_string(major) + "." + std::to_string(minor) + " (only 1.0 is accepted)");
  const std::size_t header_len =
      static_cast<unsigned char>(content[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(content[9])) << 8);
  if (content.size() < kPreamble + header_len) throw fail("truncated header");
  const std::string header = content.substr(kPreamble, header_len);

  HeaderParser p{header, 0, file};
  NpyArray arr;
  bool have_descr = false, have_order = false, have_shape = false;
  p.expect('{');
  while (!p.accept('}')) {
    const std::string key = p.string_literal();
    p.expect(':');
    if (key == "descr") {
      arr.dtype = p.string_literal();
      have_descr = true;
    } else if (key == "fortran_order") {
      const std::string w = p.word();
      if (w == "True") throw fail("fortran_order is True (only C order is accepted)");
      if (w != "False") throw fail("malformed fortran_order");
      have_order = true;
    } else if (key == "shape") {
      p.expect('(');
      while (!p.accept(')')) {
        arr.shape.push_back(p.integer());
        if (!p.accept(',')) {
          p.expect(')');
          break;
        }
      }
      have_shape = true;
    } else {
      throw fail("unexpected header key '" + key + "'");
    }
    if (!p.accept(',')) {
      p.expect('}');
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape) throw fail("header lacks descr, fortran_order or shape");
  const std::size_t isz = item_size(arr.dtype);
  if (isz == 0) {
    if (!arr.dtype.empty() && (arr.dtype[0] == '>' || arr.dtype[0] == '!'))
      throw fail("big-endian dtype '" + arr.dtype + "' (only little endian is accepted)");
    throw fail("dtype '" + arr.dtype + "' (accepted: <f4, <f8, <i4, <i8)");
  }
  std::int64_t count = 1;
  for (auto d : arr.shape) {
    if (d != 0 && count > std::numeric_limits<std::int64_t>::max() / 8 / d) throw fail("shape too large");
    count *= d;
  }
  const std::size_t body = content.size() - kPreamble - header_len;
  const std::size_t want = static_cast<std::size_t>(count) * isz;
  if (body < want)
    throw fail("truncated body: " + std::to_string(body) + " bytes for shape " + shape_text(arr.shape) + " (" +
               std::to_string(want) + " expected)");
  if (body > want)
    throw fail("body of " + std::to_string(body) + " bytes is longer than shape " + shape_text(arr.shape) + " needs (" +
               std::to_string(want) + ")");
  arr.bytes.assign(content.begin() + static_cast<std::ptrdiff_t>(kPreamble + header_len), content.end());
  return arr;
}

namespace {

// The whole file; `context` starts the error messages.
std::string file_bytes(const std::string& context, const std::string& dtype, const void* data,
                       const std::vector<std::int64_t>& shape) {
  const std::size_t item = item_size(dtype);
  if (item == 0) throw RunError(context + ": unsupported dtype '" + dtype + "'");
  std::int64_t count = 1;
  for (auto d : shape) {
    if (d < 0) throw RunError(context + ": negative dimension");
    count *= d;
  }
  std::string out = make_header(dtype, shape);
  out.append(static_cast<const char*>(data), static_cast<std::size_t>(count) * item);
  return out;
}

void write_raw(const fs::path& path, const std::string& dtype, const void* data,
               const std::vector<std::int64_t>& shape) {
  const std::string bytes = file_bytes("write_npy " + path.string(), dtype, data, shape);
  AtomicFile file(path);
  file.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.commit();
}

}  // namespace

std::string npy_bytes(const std::string& dtype, const void* data, const std::vector<std::int64_t>& shape) {
  return file_bytes("npy_bytes", dtype, data, shape);
}

void write_npy(const fs::path& path, const float* data, const std::vector<std::int64_t>& shape) {
  write_raw(path, "<f4", data, shape);
}

void write_npy(const fs::path& path, const std::int32_t* data, const std::vector<std::int64_t>& shape) {
  write_raw(path, "<i4", data, shape);
}

}  // namespace p0sim::sim
