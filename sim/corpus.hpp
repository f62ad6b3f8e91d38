#pragma once
// A byte corpus for the text task (DESIGN.md section 4): documents split into a training set and a
// held-out set, each stored back to back so a window of T+1 bytes is one slice.
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace p0sim::sim {

struct Corpus {
  struct Split {
    std::string bytes;                // the split's documents back to back
    std::vector<std::size_t> starts;  // the offset of each document's first byte, ascending
  };
  Split train, heldout;
  std::size_t files = 0;
  std::array<double, 256> train_frequency{};  // of each byte value in train.bytes
};

// Every 10th document (the 10th, 20th, ...) is held out; the rest train.
inline constexpr std::size_t kHeldOutEvery = 10;

// Reads `path`: one file, or every regular file of a directory (sorted by name; the `.dat` and `.u8`
// index files of Debian's fortunes are skipped). A file holding lines of a lone '%' is split into
// documents there (the fortune format); any other file at blank lines. Documents of whitespace
// only are dropped, and each document ends in one '\n'. Both splits must hold at least
// `min_bytes` bytes. Loaded once per path and shared (a training run builds several generators).
// Throws ConfigError("corpus", ...) for a missing, unreadable, empty or too short corpus.
std::shared_ptr<const Corpus> load_corpus(const std::string& path, std::size_t min_bytes);

}  // namespace p0sim::sim
