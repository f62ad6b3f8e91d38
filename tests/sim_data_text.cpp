// The text task: a corpus read into training and held-out documents, windows of T+1 bytes from it,
// and the errors of a corpus that cannot serve a window.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "sim/corpus.hpp"
#include "sim/data.hpp"
#include "tests/test_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_data_text_test {

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

namespace {

// The training split's byte bigrams, its last byte followed by its first (an independent count).
std::vector<double> cyclic_bigrams(const Corpus& corpus) {
  const std::string& s = corpus.train.bytes;
  std::vector<double> counts(256 * 256, 0.0);
  for (std::size_t i = 0; i < s.size(); ++i)
    counts[static_cast<unsigned char>(s[i]) * 256u + static_cast<unsigned char>(s[(i + 1) % s.size()])] += 1.0;
  return counts;
}

DataConfig counted_backcopy(const fs::path& corpus, int T, int k) {
  DataConfig c = text_config(corpus, T);
  c.task = Task::backcopy;
  c.bigrams = Bigrams::corpus;
  c.triggers = k;
  return c;
}

}  // namespace

TEST_CASE("backcopy on corpus bigrams triggers on the k most frequent bytes and otherwise follows the byte bigrams",
          "[data][text]") {
  const fs::path dir = make_corpus("bigrams", 120);
  const auto corpus = load_corpus(dir.string(), 65);
  const int k = GENERATE(1, 3);
  const DataGenerator gen(counted_backcopy(dir, 64, k));
  std::vector<int> by_frequency(256);
  std::iota(by_frequency.begin(), by_frequency.end(), 0);
  std::stable_sort(by_frequency.begin(), by_frequency.end(), [&](int a, int b) {
    return corpus->train_frequency[static_cast<std::size_t>(a)] > corpus->train_frequency[static_cast<std::size_t>(b)];
  });
  std::vector<int> expected(by_frequency.begin(), by_frequency.begin() + k);
  std::sort(expected.begin(), expected.end());
  REQUIRE(gen.trigger_tokens() == expected);

  const std::vector<double> counts = cyclic_bigrams(*corpus);
  const int rows = 400, N = gen.row_length();
  std::vector<std::int32_t> x(static_cast<std::size_t>(rows * N));
  gen.fill(0, 0, rows, x.data());
  std::vector<double> seen(256 * 256, 0.0);
  auto is_trigger = [&](int b) { return std::binary_search(expected.begin(), expected.end(), b); };
  // Each row is the corpus's counted row, or, for a byte that would trap the process (the next
  // tests), the unigram law; the few replaced rows are not checked against the counts below.
  std::vector<char> replaced(256, 0);
  int occurring = 0, replacements = 0;
  for (int a = 0; a < 256; ++a) {
    const auto as = static_cast<std::size_t>(a);
    const double total = std::accumulate(&counts[as * 256u], &counts[as * 256u] + 256, 0.0);
    if (total == 0.0 || is_trigger(a)) continue;
    ++occurring;
    const std::vector<double> row = gen.transition_row(a);
    bool counted = true, unigram = true;
    for (std::size_t c = 0; c < 256; ++c) {
      counted = counted && std::abs(row[c] - counts[as * 256u + c] / total) <= 1e-12;
      unigram = unigram && row[c] == corpus->train_frequency[c];
    }
    CAPTURE(a);
    REQUIRE((counted || unigram));
    replaced[as] = !counted;
    replacements += !counted;
  }
  CHECK(replacements < occurring);
  auto traps = [&](int b) { return replaced[static_cast<std::size_t>(b)] != 0; };
  for (int r = 0; r < rows; ++r) {
    const std::int32_t* row = &x[static_cast<std::size_t>(r * N)];
    for (int t = 0; t + 1 < N; ++t) {
      if (is_trigger(row[t])) {
        if (t >= 1) REQUIRE(row[t + 1] == row[t - 1]);  // the copy of the byte before the trigger
        continue;
      }
      if (traps(row[t])) continue;
      // a transition the corpus never makes would be a bug (no smoothing)
      REQUIRE(counts[static_cast<std::size_t>(row[t]) * 256u + static_cast<std::size_t>(row[t + 1])] > 0.0);
      seen[static_cast<std::size_t>(row[t]) * 256u + static_cast<std::size_t>(row[t + 1])] += 1.0;
    }
  }
  // The most visited non-trigger byte's successors follow the counted row: each frequency within 5
  // binomial standard deviations of the corpus's (a false alarm below 1e-6 per successor).
  int a = -1;
  double visits = 0.0;
  for (int b = 0; b < 256; ++b) {
    const double n = std::accumulate(&seen[static_cast<std::size_t>(b) * 256u],
                                     &seen[static_cast<std::size_t>(b) * 256u] + 256, 0.0);
    if (n > visits) visits = n, a = b;
  }
  REQUIRE(visits > 1000.0);
  const double total = std::accumulate(&counts[static_cast<std::size_t>(a) * 256u],
                                       &counts[static_cast<std::size_t>(a) * 256u] + 256, 0.0);
  for (int c = 0; c < 256; ++c) {
    const double p = counts[static_cast<std::size_t>(a) * 256u + static_cast<std::size_t>(c)] / total;
    if (p == 0.0) continue;
    CAPTURE(a, c, p);
    CHECK(std::abs(seen[static_cast<std::size_t>(a) * 256u + static_cast<std::size_t>(c)] / visits - p) <=
          5.0 * std::sqrt(p * (1.0 - p) / visits));
  }
}

TEST_CASE("a byte followed only by triggers, or by itself and triggers, does not trap backcopy on corpus bigrams",
          "[data][text]") {
  // ' ' is the most frequent byte and so the one trigger. 'q' occurs only before ' '; '=' only
  // before '=' or ' '. Watched at non-triggers, the process would stay on that byte forever once
  // there ("q q q ...", "= = ="), and its stationary law would pile up on it and ' ' (all of it).
  // Its row is the unigram law instead.
  const auto [name, text, trapped] = GENERATE(table<std::string, std::string, char>(
      {{"trap_trigger", "abq  cdq efg\n%\n", 'q'}, {"trap_self", "ab==     cd== efg\n%\n", '='}}));
  CAPTURE(name);
  const fs::path dir = kScratch.fresh_dir(name);
  std::string corpus;
  for (int i = 0; i < 60; ++i) corpus += text;
  write_text(dir / "f", corpus);
  const DataGenerator gen(counted_backcopy(dir, 16, 1));
  REQUIRE(gen.trigger_tokens() == std::vector<int>{' '});
  CHECK(gen.marginal()[static_cast<std::size_t>(trapped)] + gen.marginal()[static_cast<std::size_t>(' ')] < 0.9);
  CHECK(std::isfinite(gen.entropy_floor()));
}

TEST_CASE("corpus bigrams need the byte vocabulary", "[data][text]") {
  DataConfig c = counted_backcopy(make_corpus("bigram_vocab", 40), 8, 2);
  c.vocab = 64;
  try {
    DataGenerator gen(c);
    FAIL("accepted");
  } catch (const p0sim::ConfigError& e) {
    CHECK(e.field == "vocab");
  }
}

TEST_CASE("on Debian's fortunes the k = 3 triggers are space, e and t, and two rare bytes are untrapped",
          "[data][text]") {
  // Guo et al.'s triggers on tiny Shakespeare are the same three characters. The two bytes of one
  // UTF-8 character that occurs once (0x9f, 0xa9) are followed only by triggers: their rows
  // become the unigram law; every other occurring byte keeps its counted row.
  const std::string fortunes = "/usr/share/games/fortunes";  // installed by scripts/install-deps.sh
  REQUIRE(fs::is_directory(fortunes));
  DataConfig c = text_config(fortunes, 255);
  c.task = Task::backcopy;
  c.bigrams = Bigrams::corpus;
  c.triggers = 3;
  const DataGenerator gen(c);
  CHECK(gen.trigger_tokens() == std::vector<int>{' ', 'e', 't'});
  const auto corpus = load_corpus(fortunes, 256);
  std::vector<int> replaced;
  for (int a = 0; a < 256; ++a)
    if (corpus->train_frequency[static_cast<std::size_t>(a)] > 0.0 && a != ' ' && a != 'e' && a != 't' &&
        gen.transition_row(a) == std::vector<double>(corpus->train_frequency.begin(), corpus->train_frequency.end()))
      replaced.push_back(a);
  CHECK(replaced == std::vector<int>{0x9f, 0xa9});
}

}  // namespace sim_data_text_test
