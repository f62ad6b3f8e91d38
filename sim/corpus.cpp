#include "sim/corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "common/errors.hpp"

namespace p0sim::sim {

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> corpus_files(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw ConfigError("corpus", "'" + path + "' does not exist");
  if (fs::is_regular_file(st)) return {fs::path(path)};
  if (!fs::is_directory(st)) throw ConfigError("corpus", "'" + path + "' is neither a file nor a directory");
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && ext != ".dat" && ext != ".u8") files.push_back(e.path());
  }
  if (ec) throw ConfigError("corpus", "cannot list '" + path + "': " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  if (!(in && text << in.rdbuf()) && !in.eof()) throw ConfigError("corpus", "cannot read '" + file.string() + "'");
  return text.str();
}

// The documents of one file's text, in order.
std::vector<std::string> split_documents(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const bool fortune = std::find(lines.begin(), lines.end(), "%") != lines.end();
  std::vector<std::string> docs;
  std::string doc;
  auto finish = [&] {
    if (doc.find_first_not_of(" \t\r\n\f\v") != std::string::npos) docs.push_back(doc);
    doc.clear();
  };
  for (const std::string& line : lines) {
    const bool separator = fortune ? line == "%" : line.find_first_not_of(" \t\r") == std::string::npos;
    if (separator)
      finish();
    else
      doc += line + "\n";
  }
  finish();
  return docs;
}

std::shared_ptr<const Corpus> read_corpus(const std::string& path) {
  auto corpus = std::make_shared<Corpus>();
  std::size_t index = 0;
  for (const fs::path& file : corpus_files(path)) {
    ++corpus->files;
    for (const std::string& doc : split_documents(read_bytes(file))) {
      Corpus::Split& split = ++index % kHeldOutEvery == 0 ? corpus->heldout : corpus->train;
      split.starts.push_back(split.bytes.size());
      split.bytes += doc;
    }
  }
  std::array<std::size_t, 256> count{};
  for (unsigned char b : corpus->train.bytes) ++count[b];
  for (std::size_t b = 0; b < 256; ++b)
    corpus->train_frequency[b] = corpus->train.bytes.empty()
                                     ? 0.0
                                     : static_cast<double>(count[b]) / static_cast<double>(corpus->train.bytes.size());
  return corpus;
}

}  // namespace

std::shared_ptr<const Corpus> load_corpus(const std::string& path, std::size_t min_bytes) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Corpus>> cache;
  std::shared_ptr<const Corpus> corpus;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    auto& slot = cache[path];
    if (!slot) slot = read_corpus(path);
    corpus = slot;
  }
  auto too_short = [&](const Corpus::Split& s, const char* name) {
    if (s.bytes.size() < min_bytes)
      throw ConfigError("corpus", "'" + path + "' has " + std::to_string(s.bytes.size()) + " bytes of " + name +
                                      " text in " + std::to_string(s.starts.size()) + " documents (" +
                                      std::to_string(corpus->files) + " files; every " + std::to_string(kHeldOutEvery) +
                                      "th document is held out); a window needs " + std::to_string(min_bytes));
  };
  too_short(corpus->train, "training");
  too_short(corpus->heldout, "held-out");
  return corpus;
}

}  // namespace p0sim::sim
