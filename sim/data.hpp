#pragma once
// Synthetic token sequences (DESIGN.md section 4). Counter-based: batch i of a generator is the
// same sequence of tokens whatever was drawn before and whatever the thread count, so training is
// reproducible and a resumed run draws exactly the batches it would have drawn.
// Every task draws the token at position 0 from the same marginal as any other position.
#include <cstdint>
#include <string>
#include <vector>

namespace p0sim::sim {

enum class Task { uniform, markov, backcopy, repeat };
std::string to_string(Task t);

struct DataConfig {
  Task task = Task::markov;
  int vocab = 64;              // V >= 2
  int seq_len = 32;            // T >= 2; each row has T+1 tokens (inputs 0..T-1, targets 1..T)
  double markov_alpha = 0.1;   // Dirichlet concentration of the bigram rows (markov, backcopy)
  int triggers = 4;            // backcopy: number of trigger tokens k, 1 <= k < V
  std::uint64_t seed = 1;      // the task's structure (transition matrix, trigger set) and stream
};

class DataGenerator {
 public:
  // Throws p0sim::UsageError naming the option (--vocab, --seq-len, --triggers, --markov-alpha).
  explicit DataGenerator(const DataConfig& config);

  const DataConfig& config() const { return config_; }
  int row_length() const { return config_.seq_len + 1; }

  // rows: (batch, T+1) int32, row-major. `stream` separates independent uses of one task
  // (0 = training batches, 1 = probe/eval batches, ...).
  void fill(std::uint64_t stream, std::uint64_t batch_index, int batch, std::int32_t* rows) const;

  // The marginal distribution of a token at any position (stationary distribution for markov
  // and backcopy), for tests and for the entropy floor of the loss.
  std::vector<double> marginal() const;
  // Expected per-token cross-entropy of the Bayes-optimal next-token predictor, in nats
  // (where it has a closed form; NaN otherwise).
  double entropy_floor() const;
  // The same over the T+1 predictions of a model with BOS, whose first prediction (of the token at
  // position 0, from BOS alone) costs the entropy of the marginal.
  double entropy_floor(bool bos) const;
  // The trigger tokens of backcopy (ascending), empty for other tasks.
  std::vector<int> trigger_tokens() const;

 private:
  DataConfig config_;
  std::vector<double> transition_;   // (V,V) row-major, markov/backcopy
  std::vector<double> stationary_;   // (V)
  std::vector<char> is_trigger_;     // (V) backcopy
  std::vector<double> row_cdf_;      // (V,V) cumulative rows of transition_, for sampling
  std::vector<double> start_cdf_;    // cumulative law of the first token (markov: V entries;
                                     // backcopy: V*V entries over the pair (x_{-1}, x_0))
  double floor_ = 0.0;               // entropy floor of the T predictions, nats per token
  double first_extra_ = 0.0;         // backcopy: extra entropy of predicting x_1 from x_0 alone
};

}  // namespace p0sim::sim
