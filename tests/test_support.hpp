#pragma once
// Scratch space for tests that write files: one directory per test process under the system temp
// directory, removed when the process exits.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
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

// A whole file's bytes ("" if it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Exit code (-1 for a signal) and stderr of a shell command whose stdout is discarded.
struct Outcome {
  int code = -1;
  std::string err;
};
inline Outcome run_shell(const ScratchRoot& scratch, const std::string& cmd) {
  const std::filesystem::path err = scratch.file("stderr.txt");
  const int status = std::system((cmd + " > /dev/null 2> '" + err.string() + "'").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(err)};
}

}  // namespace p0sim::test
