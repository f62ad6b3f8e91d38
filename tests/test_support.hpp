#pragma once
// Scratch space for tests that write files: one directory per test process under the system temp
// directory, removed when the process exits.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace p0sim::test {

class ScratchRoot {
 public:
  explicit ScratchRoot(const std::string& prefix)
      : root_(std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()))) {}
  ~ScratchRoot() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  ScratchRoot(const ScratchRoot&) = delete;
  ScratchRoot& operator=(const ScratchRoot&) = delete;

  // The root, created if needed.
  const std::filesystem::path& root() const {
    std::filesystem::create_directories(root_);
    return root_;
  }
  // A path below the root (the root exists; the path itself is not created).
  std::filesystem::path file(const std::string& name) const { return root() / name; }
  // A fresh, empty directory below the root.
  std::filesystem::path fresh_dir(const std::string& name) const {
    std::filesystem::path dir = root() / name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
  }

 private:
  std::filesystem::path root_;
};

}  // namespace p0sim::test
