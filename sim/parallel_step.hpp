#pragma once
// One training step's forward + backward with the batch split across threads ("one run,
// every core"), bit-identical for any thread count.
//
// Chunking is a property of the config, never of the thread count: the B rows are cut into
// `chunks()` contiguous chunks (the first B % n one row longer), each chunk's forward and backward
// run on a Model replica sized for one chunk, each chunk's gradient lands in its own slot, and the
// slots are reduced in chunk order 0, 1, 2, ...: grads = sum_c w_c * g_c with w_c = b_c / B (the
// loss is the mean over all B*P predictions and each chunk's backward is the mean over its own
// b_c*P). Threads only pick which chunk to run next, so threads = 1, 2, 3, ... give the same bits.
// With one chunk (small configs, where splitting does not pay: see chunk_count) the step is the
// plain model.forward / zero_grad / backward of the single-threaded loop, bit for bit.
//
// Processes too (one run across machines): with a ChunkExchange of R processes, process r computes
// only its contiguous range of chunks (chunk_range), the exchange fills in every other chunk's slot
// and loss, and every process reduces all chunks in chunk order, so each ends with the bits of one
// process. A one-chunk config has nothing to split: every process runs the plain step.
//
// The thread pool and every buffer are created in the constructor; step() allocates nothing.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "common/thread_pool.hpp"
#include "sim/model.hpp"

namespace p0sim::sim {

// Rough FLOPs of one row's forward + backward (the bench/bench_model.cpp count: matmuls
// 6*(L*(4C^2+2CF)+VC)*P, attention 12*L*P^2*C; prefix-bidirectional runs P passes of mean length
// (P+1)/2, so its matmul part is (P+1)/2 times larger).
double row_flops(const ModelConfig& c);

// Below this many FLOPs per chunk a split does not pay (measured on a 2-core AVX-512 VM with
// BM_parallel_step, bench/README.md: the step of (C=32, T=16, B=16), 47 MFLOP, was no faster on
// 2 threads x 2 chunks than on one; (C=64, T=32, B=64), 1.2 GFLOP, was 1.6x faster).
inline constexpr double kMinChunkFlops = 60e6;
// Chunks never exceed this, so a chunk keeps enough columns for Eigen's GEMM kernels.
inline constexpr int kMaxChunks = 8;

// The number of chunks for a batch of B rows: min(kMaxChunks, B, floor(B*row_flops / kMinChunkFlops)),
// at least 1. Depends on the config only.
int chunk_count(const ModelConfig& c, int batch);

// The processes one run's step is split across (MPI ranks, wired above sim/). `gather` is called by
// every process after it computed its own chunks: slots (nparams, chunks) column-major and
// chunk_loss (chunks) hold this process's range on entry and every chunk on return.
struct ChunkExchange {
  int rank = 0, ranks = 1;
  std::function<void(float* slots, std::int64_t nparams, double* chunk_loss, int chunks)> gather;
};

// The chunks [first, end) process `rank` of `ranks` computes: contiguous, in rank order, sizes
// differing by at most one (empty when there are more processes than chunks).
std::pair<int, int> chunk_range(int chunks, int rank, int ranks);

class ParallelStep {
 public:
  // threads: the most threads to use (TrainConfig::threads); fewer are started when there are
  // fewer chunks. `chunks` = 0 means chunk_count(config, batch) (tests and benchmarks may force one).
  // `exchange` (kept by pointer; nullptr or one process = this process computes every chunk).
  ParallelStep(const ModelConfig& config, int batch, int threads, int chunks = 0,
               const ChunkExchange* exchange = nullptr);
  ~ParallelStep();

  int chunks() const { return static_cast<int>(chunk_rows_.size()); }
  // Rows of each chunk, in chunk order (the first is the largest).
  const std::vector<int>& chunk_rows() const { return chunk_rows_; }
  int threads() const;

  // rows: (batch, T+1). Leaves d(mean loss)/d(params) in model.grads() (overwritten) and returns
  // the mean loss over all batch*P predictions. Reads model.params().
  double forward_backward(Model<float>& model, const std::int32_t* rows);

 private:
  static void compute_job(void* self, int thread);
  static void reduce_job(void* self, int thread);

  ModelConfig config_;
  int batch_ = 0;
  std::vector<int> chunk_rows_, chunk_first_;
  std::vector<double> chunk_loss_;
  std::vector<float> weights_;
  std::vector<std::unique_ptr<Model<float>>> replicas_;         // one per thread
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic> slots_;  // (nparams, chunks)
  std::unique_ptr<ThreadPool> pool_;
  // per-step state read by the workers
  Model<float>* model_ = nullptr;
  const std::int32_t* rows_ = nullptr;
  std::atomic<int> next_chunk_{0};
  int own_begin_ = 0, own_end_ = 0;  // this process's chunks
  const ChunkExchange* exchange_ = nullptr;
};

}  // namespace p0sim::sim
