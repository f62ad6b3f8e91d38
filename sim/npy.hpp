#pragma once
// NPY files as the NumPy format specification defines them: version 1.0 header, little endian,
// C order. Anything else (Fortran order, big endian, other versions or dtypes) is rejected with a
// clear error naming the file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace p0sim::sim {

struct NpyArray {
  std::string dtype;  // "<f4", "<f8", "<i4" or "<i8"
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> bytes;            // raw little-endian C-order data
  std::int64_t size() const;                   // product of shape
  std::vector<float> as_float() const;         // from <f4 or <f8
  std::vector<std::int64_t> as_int64() const;  // from <i4 or <i8
};

// Throws p0sim::UsageError("<path>", reason) on a missing file or a malformed/unsupported header
// or a truncated body.
NpyArray read_npy(const std::filesystem::path& path);
// The same from the file's bytes (`file` names it in errors); the fuzz target's entry point.
NpyArray parse_npy(const std::string& content, const std::string& file);

// A whole NPY file in memory, byte for byte what numpy.save writes: `data` holds the array's
// little-endian C-order items of `dtype` ("<f4", "<f8", "<i4" or "<i8"). Throws p0sim::RunError on
// another dtype or a negative dimension.
std::string npy_bytes(const std::string& dtype, const void* data, const std::vector<std::int64_t>& shape);

// Written atomically (temp file, fsync, rename). Throws p0sim::RunError on I/O failure.
void write_npy(const std::filesystem::path& path, const float* data, const std::vector<std::int64_t>& shape);
void write_npy(const std::filesystem::path& path, const std::int32_t* data, const std::vector<std::int64_t>& shape);

}  // namespace p0sim::sim
