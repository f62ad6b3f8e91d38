// The text task: a corpus read into training and held-out documents, windows of T+1 bytes from it,
// and the errors of a corpus that cannot serve a window.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "sim/corpus.hpp"
#include "sim/data.hpp"
#include "tests/test_support.hpp"

using namespace p0sim::sim;
namespace fs = std::filesystem;

namespace {

const p0sim::test::ScratchRoot kScratch("p0sim_text_");

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// A fortune-format file of n documents "doc <i> ..." (each a few lines), and a blank-line file.
fs::path make_corpus(const std::string& name, int n) {
  const fs::path dir = kScratch.fresh_dir(name);
  std::string fortunes;
  for (int i = 0; i < n; ++i)
    fortunes += "doc " + std::to_string(i) + " says something\nover two lines, number " + std::to_string(i) + "\n%\n";
  write_text(dir / "a_fortunes", fortunes + "  \n%\n");       // a whitespace-only document is dropped
  write_text(dir / "a_fortunes.dat", std::string(64, '\0'));  // the index files are skipped
  write_text(dir / "b_plain", "first paragraph\nof plain text\n\n\nsecond paragraph\n");
  return dir;
}

DataConfig text_config(const fs::path& corpus, int T) {
  DataConfig c;
  c.task = Task::text;
  c.vocab = kTextVocab;
  c.seq_len = T;
  c.corpus = corpus.string();
  return c;
}

}  // namespace

TEST_CASE("a corpus splits into documents, every tenth held out, in file-name order", "[data][text]") {
  const fs::path dir = make_corpus("split", 38);
  const auto corpus = load_corpus(dir.string(), 8);
  CHECK(corpus->files == 2);
  // 38 fortunes + 2 paragraphs = 40 documents: the 10th, 20th, 30th and 40th are held out
  REQUIRE(corpus->train.starts.size() == 36);
  REQUIRE(corpus->heldout.starts.size() == 4);
  auto document = [](const Corpus::Split& s, std::size_t i) {
    const std::size_t end = i + 1 < s.starts.size() ? s.starts[i + 1] : s.bytes.size();
    return s.bytes.substr(s.starts[i], end - s.starts[i]);
  };
  CHECK(document(corpus->heldout, 0) == "doc 9 says something\nover two lines, number 9\n");
  CHECK(document(corpus->heldout, 3) == "second paragraph\n");
  CHECK(document(corpus->train, 0) == "doc 0 says something\nover two lines, number 0\n");
  CHECK(document(corpus->train, 35) == "first paragraph\nof plain text\n");
  CHECK(corpus->train.bytes.find('%') == std::string::npos);
  const double total = std::accumulate(corpus->train_frequency.begin(), corpus->train_frequency.end(), 0.0);
  CHECK(total == Approx(1.0).epsilon(1e-12));
  CHECK(corpus->train_frequency[static_cast<unsigned char>('\0')] == 0.0);
}

TEST_CASE("text windows are slices of the training documents for stream 0 and of the held-out ones otherwise",
          "[data][text]") {
  const fs::path dir = make_corpus("windows", 200);
  const auto corpus = load_corpus(dir.string(), 8);
  const TextWindow window = GENERATE(TextWindow::random, TextWindow::document);
  DataConfig c = text_config(dir, 15);
  c.window = window;
  const DataGenerator gen(c);
  const int B = 64, N = gen.row_length();
  for (std::uint64_t stream : {0u, 1u, 2u}) {
    std::vector<std::int32_t> rows(static_cast<std::size_t>(B * N)), again(rows.size());
    std::vector<Kind> kinds(static_cast<std::size_t>(B * (N - 1)));
    gen.fill(stream, 3, B, rows.data(), kinds.data());
    gen.fill(stream, 3, B, again.data());
    CHECK(rows == again);  // counter-based: the same batch index gives the same rows
    const Corpus::Split& split = stream == 0 ? corpus->train : corpus->heldout;
    for (int r = 0; r < B; ++r) {
      std::string bytes;
      for (int t = 0; t < N; ++t) {
        const std::int32_t x = rows[static_cast<std::size_t>(r * N + t)];
        REQUIRE(x >= 0);
        REQUIRE(x < 256);
        bytes.push_back(static_cast<char>(x));
      }
      const std::size_t at = split.bytes.find(bytes);
      INFO("stream " << stream << " row " << r << ": '" << bytes << "'");
      REQUIRE(at != std::string::npos);
      if (window == TextWindow::document)
        CHECK((std::find(split.starts.begin(), split.starts.end(), at) != split.starts.end() ||
               at + static_cast<std::size_t>(N) == split.bytes.size()));
    }
    CHECK(std::all_of(kinds.begin(), kinds.end(), [](Kind k) { return k == Kind::active; }));
  }
}

TEST_CASE("random text windows start anywhere, so position 0 is an arbitrary byte", "[data][text]") {
  const fs::path dir = make_corpus("anywhere", 200);
  const DataGenerator gen(text_config(dir, 15));
  std::vector<std::int32_t> rows(static_cast<std::size_t>(256 * gen.row_length()));
  gen.fill(0, 0, 256, rows.data());
  std::vector<int> first_bytes;
  for (int r = 0; r < 256; ++r) first_bytes.push_back(rows[static_cast<std::size_t>(r * gen.row_length())]);
  std::sort(first_bytes.begin(), first_bytes.end());
  const auto distinct = std::unique(first_bytes.begin(), first_bytes.end()) - first_bytes.begin();
  CHECK(distinct >= 15);  // documents all start with 'd', 'f' or 's'; random offsets see many bytes
}

TEST_CASE("a corpus that cannot serve a window is a configuration error naming the corpus", "[data][text]") {
  const fs::path empty = kScratch.fresh_dir("empty");
  const fs::path tiny = kScratch.fresh_dir("tiny");
  write_text(tiny / "t", "a\n%\nb\n%\n");
  const fs::path file = kScratch.file("nine_documents");
  write_text(file, "one\n%\ntwo\n%\nthree\n%\nfour\n%\nfive\n%\nsix\n%\nseven\n%\neight\n%\nnine\n");  // none held out
  for (const fs::path& p : {kScratch.root() / "missing", empty, tiny, file}) {
    INFO(p.string());
    try {
      DataGenerator gen(text_config(p, 4));
      FAIL("accepted");
    } catch (const p0sim::ConfigError& e) {
      CHECK(e.field == "corpus");
    }
  }
  DataConfig wrong_vocab = text_config(make_corpus("vocab", 40), 4);
  wrong_vocab.vocab = 64;
  try {
    DataGenerator gen(wrong_vocab);
    FAIL("accepted");
  } catch (const p0sim::ConfigError& e) {
    CHECK(e.field == "vocab");
  }
}

TEST_CASE("the text task's marginal is the training bytes' frequency and it has no closed-form floor", "[data][text]") {
  const fs::path dir = make_corpus("marginal", 50);
  const DataGenerator gen(text_config(dir, 8));
  const auto corpus = load_corpus(dir.string(), 9);
  const std::vector<double> m = gen.marginal();
  REQUIRE(m.size() == 256);
  for (int b = 0; b < 256; ++b)
    CHECK(m[static_cast<std::size_t>(b)] == corpus->train_frequency[static_cast<std::size_t>(b)]);
  CHECK(std::isnan(gen.entropy_floor()));
}
