#pragma once
// Result files are written whole or not at all: content goes to a temporary file in the same
// directory, is flushed to disk, then renamed over the target. Existing results are never
// overwritten silently.
#include <filesystem>
#include <fstream>
#include <string>

namespace p0sim {

// Throws UsageError naming `option` if `path` cannot be created (missing or unwritable parent
// directory) or already exists and `force` is false.
void check_output_file(const std::string& option, const std::filesystem::path& path, bool force);

// Throws UsageError naming `option` unless `dir` is absent (it is created) or an empty directory,
// or `allow_existing` is true.
void prepare_output_dir(const std::string& option, const std::filesystem::path& dir, bool allow_existing);

// The whole file; a missing or unreadable one is a UsageError naming `option` and the file.
std::string read_text_file(const std::filesystem::path& path, const std::string& option);

// Writes `content` to `path` atomically (temp file, fsync, rename). Throws RunError on I/O failure.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

// Streams into a temporary file; commit() flushes, fsyncs and renames it to the target.
// Destroyed without commit(), it removes the temporary file, so no half-written result remains.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  std::ofstream& stream() { return out_; }
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace p0sim
