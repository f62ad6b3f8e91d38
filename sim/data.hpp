#pragma once
// Token sequences (DESIGN.md section 4): synthetic tasks, and windows of a byte corpus. Counter-based: batch i of a
// generator is the same sequence of tokens whatever was drawn before and whatever the thread count, so training is
// reproducible and a resumed run draws exactly the batches it would have drawn.
// Every task draws the token at position 0 from the same marginal as any other position.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/enum_names.hpp"

namespace p0sim {
class PhiloxStream;
}

namespace p0sim::sim {

// backcopy_indep ("backcopy-indep"): firstrecall's row law, but the token after an inserted
// trigger copies the token just before the trigger (the search's "backcopy with triggers inserted
// independently of the current token"). firstrecall_lookup ("firstrecall-lookup"): lookup's rows
// with firstrecall's triggers inserted as well, so one sequence mixes both tasks.
// text: next-byte prediction on windows of a real corpus (sim/corpus.hpp); V = 256.
enum class Task {
  uniform,
  markov,
  backcopy,
  repeat,
  firstrecall,
  lookup,
  backcopy_indep,
  firstrecall_lookup,
  text,
  count
};
// The tasks whose triggers copy position 0 (identification is defined for them).
inline bool recalls_position0(Task t) { return t == Task::firstrecall || t == Task::firstrecall_lookup; }
// Filler of firstrecall: i.i.d. uniform, or a bigram chain (rows ~ Dirichlet(markov_alpha)) over
// the non-trigger tokens.
enum class Filler { uniform, markov, count };

constexpr std::array<std::string_view, 9> enum_names_of(Task) {
  return {"uniform", "markov",         "backcopy",           "repeat", "firstrecall",
          "lookup",  "backcopy-indep", "firstrecall-lookup", "text"};
}
// Where a text window starts: at a random byte of the split (so position 0 is an arbitrary byte,
// marked by the causal mask alone), or at a random document's first byte (run on into the next
// documents when it is shorter than the window; with --bos, the control with a BOS token at each
// document start).
enum class TextWindow { random, document, count };
constexpr std::array<std::string_view, 2> enum_names_of(TextWindow) { return {"random", "document"}; }
struct Corpus;
constexpr std::array<std::string_view, 2> enum_names_of(Filler) { return {"uniform", "markov"}; }
// Where markov's and backcopy's bigram rows come from: drawn from Dirichlet(markov_alpha), or counted
// from the byte bigrams of a corpus's training documents (V = 256; backcopy's triggers are then the
// k most frequent bytes), as Guo et al.'s Bigram-Backcopy counts the character bigrams of a text.
enum class Bigrams { dirichlet, corpus, count };
constexpr std::array<std::string_view, 2> enum_names_of(Bigrams) { return {"dirichlet", "corpus"}; }

// Per input position (B,T) of a filled batch: which predictions a task scores.
// Input position t predicts row token t+1.
enum class Kind : std::int8_t {
  none = 0,
  active = 1,  // an active query (firstrecall/backcopy trigger, lookup query); its target is scored
  first = 2,   // firstrecall: also the first trigger of its row (position 0 is the only copy source)
  query = 3,   // firstrecall-lookup: a lookup query, scored apart from the triggers
};

struct DataConfig {
  Task task = Task::markov;
  int vocab = 64;                        // V >= 2
  int seq_len = 32;                      // T >= 2; each row has T+1 tokens (inputs 0..T-1, targets 1..T)
  double markov_alpha = 0.1;             // Dirichlet concentration of the bigram rows (markov, backcopy)
  int triggers = 4;                      // backcopy, firstrecall: number of trigger tokens k, 1 <= k < V
  double trigger_prob = 0.1;             // firstrecall: insertion probability q of a trigger, in (0, 1);
                                         // lookup: probability of a fact and (separately) of a query, in (0, 0.5]
  Filler filler = Filler::uniform;       // firstrecall
  int keys = 4;                          // lookup: keys K
  int values = 8;                        // lookup: values per key Nv
  std::uint64_t seed = 1;                // the task's structure (transition matrix, trigger set) and stream
  Bigrams bigrams = Bigrams::dirichlet;  // markov, backcopy
  std::string corpus = "/usr/share/games/fortunes";  // text, bigrams = corpus: a file or a directory of files
  TextWindow window = TextWindow::random;            // text
};
// The bytes of a window must hold the T+1 tokens of a row.
inline constexpr int kTextVocab = 256;

// The task's options as summary.json and checkpoints record them.
nlohmann::json to_json(const DataConfig& c);

class DataGenerator {
 public:
  // Throws p0sim::UsageError naming the option (--vocab, --seq-len, --triggers, --markov-alpha).
  explicit DataGenerator(const DataConfig& config);

  const DataConfig& config() const { return config_; }
  int row_length() const { return config_.seq_len + 1; }

  // rows: (batch, T+1) int32, row-major. `stream` separates independent uses of one task
  // (0 = training batches, 1 = probe/eval batches, ...). text: stream 0 reads the training
  // documents, every other stream the held-out ones.
  // kinds (optional): (batch, T) per input position, what the task scores there (Kind). Drawing
  // it changes nothing in rows.
  void fill(std::uint64_t stream, std::uint64_t batch_index, int batch, std::int32_t* rows,
            Kind* kinds = nullptr) const;

  // The marginal distribution of a token at any position (stationary distribution for markov
  // and backcopy; text: the training bytes' frequencies), for tests and for the entropy floor of
  // the loss.
  std::vector<double> marginal() const;
  // Expected per-token cross-entropy of the Bayes-optimal next-token predictor, in nats
  // (where it has a closed form; NaN otherwise).
  double entropy_floor() const;
  // The same over the T+1 predictions of a model with BOS, whose first prediction (of the token at
  // position 0, from BOS alone) costs the entropy of the marginal.
  double entropy_floor(bool bos) const;
  // The trigger tokens of backcopy and firstrecall (ascending), empty for other tasks.
  std::vector<int> trigger_tokens() const;
  // Row a of markov's and backcopy's bigram matrix, P(next = c | a) for c in 0..V-1.
  std::vector<double> transition_row(int a) const;

  // lookup's vocabulary layout, in this order from token 0:
  //   values v            0 .. Nv-1
  //   facts (k, v)        Nv + k*Nv + v               (K*Nv tokens: "key k holds value v")
  //   queries q(k)        Nv + K*Nv + k               (K tokens)
  //   none                Nv + K*Nv + K               (the answer when key k had no fact yet)
  //   fillers             the rest, up to V-1         (at least one: V >= Nv + K*Nv + K + 2)
  int lookup_fact(int key, int value) const { return config_.values * (1 + key) + value; }
  int lookup_query(int key) const { return config_.values * (1 + config_.keys) + key; }
  int lookup_none() const { return config_.values * (1 + config_.keys) + config_.keys; }

 private:
  void init_firstrecall();
  void init_lookup();
  void fill_firstrecall(PhiloxStream& rng, std::int32_t* x, Kind* kind) const;  // also backcopy-indep
  void fill_lookup(PhiloxStream& rng, std::int32_t* x, Kind* kind) const;       // also firstrecall-lookup
  void fill_text(std::uint64_t stream, PhiloxStream& rng, std::int32_t* x, Kind* kind) const;

  DataConfig config_;
  std::vector<double> transition_;        // (V,V) row-major, markov/backcopy
  std::vector<double> stationary_;        // (V)
  std::vector<char> is_trigger_;          // (V) backcopy, firstrecall
  std::vector<int> fillers_;              // firstrecall, backcopy-indep: the non-trigger tokens (ascending)
  std::vector<double> filler_cdf_;        // firstrecall markov: (n,n) cumulative rows over fillers_
  std::vector<double> filler_start_cdf_;  // firstrecall markov: (n) cumulative stationary law
  std::vector<double> row_cdf_;           // (V,V) cumulative rows of transition_, for sampling
  std::vector<double> start_cdf_;         // cumulative law of the first token (markov: V entries;
                                          // backcopy: V*V entries over the pair (x_{-1}, x_0))
  double floor_ = 0.0;                    // entropy floor of the T predictions, nats per token
  double first_extra_ = 0.0;              // backcopy: extra entropy of predicting x_1 from x_0 alone
  std::shared_ptr<const Corpus> corpus_;  // text
};

}  // namespace p0sim::sim
