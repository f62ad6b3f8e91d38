#include "common/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.hpp"

namespace p0sim {
namespace fs = std::filesystem;

namespace {

fs::path parent_or_dot(const fs::path& p) {
  fs::path parent = p.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

void fsync_path(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY);
  if (fd < 0) throw RunError("cannot open " + p.string() + " to flush it: " + std::strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw RunError("cannot flush " + p.string() + ": " + std::strerror(errno));
}

fs::path temp_name(const fs::path& target) {
  return target.parent_path() / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()));
}

}  // namespace

void check_output_file(const std::string& option, const fs::path& path, bool force) {
  if (path.empty()) throw UsageError(option, "an output path is required");
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(option, "'" + path.string() + "' is a directory, expected a file path");
  fs::path parent = parent_or_dot(path);
  if (!fs::is_directory(parent, ec)) throw UsageError(option, "directory '" + parent.string() + "' does not exist");
  if (::access(parent.c_str(), W_OK) != 0)
    throw UsageError(option, "directory '" + parent.string() + "' is not writable");
  if (fs::exists(path, ec) && !force)
    throw UsageError(option, "'" + path.string() + "' already exists (pass --force to overwrite)");
}

void prepare_output_dir(const std::string& option, const fs::path& dir, bool allow_existing) {
  if (dir.empty()) throw UsageError(option, "an output directory is required");
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw UsageError(option, "'" + dir.string() + "' exists and is not a directory");
    if (!allow_existing && !fs::is_empty(dir, ec))
      throw UsageError(option, "'" + dir.string() + "' is not empty (pass --force to write into it anyway)");
    if (::access(dir.c_str(), W_OK) != 0) throw UsageError(option, "directory '" + dir.string() + "' is not writable");
    return;
  }
  fs::path parent = parent_or_dot(dir);
  if (!fs::is_directory(parent, ec))
    throw UsageError(option, "parent directory '" + parent.string() + "' does not exist");
  if (::access(parent.c_str(), W_OK) != 0)
    throw UsageError(option, "directory '" + parent.string() + "' is not writable");
  fs::create_directory(dir, ec);
  if (ec) throw UsageError(option, "cannot create '" + dir.string() + "': " + ec.message());
}

AtomicFile::AtomicFile(fs::path target) : target_(std::move(target)), temp_(temp_name(target_)) {
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw RunError("cannot write " + temp_.string() + ": " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void AtomicFile::commit() {
  out_.flush();
  if (!out_) throw RunError("write failed for " + target_.string());
  out_.close();
  fsync_path(temp_);
  std::error_code ec;
  fs::rename(temp_, target_, ec);
  if (ec) throw RunError("cannot rename " + temp_.string() + " to " + target_.string() + ": " + ec.message());
  committed_ = true;
  fsync_path(parent_or_dot(target_));
}

std::string read_text_file(const std::filesystem::path& path, const std::string& option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(option, "cannot read '" + path.string() + "'");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file_atomic(const fs::path& path, const std::string& content) {
  AtomicFile file(path);
  file.stream().write(content.data(), static_cast<std::streamsize>(content.size()));
  file.commit();
}

}  // namespace p0sim
