// The threaded training step (sim/parallel_step.hpp): the batch is cut into a fixed set of chunks
// that depends on the config only, so the weights are bit-identical for any thread count; the
// chunked gradient is the full batch's gradient up to float rounding; small configs keep one chunk
// (the plain single-model step); a step split across processes gives each the one-process bits.
#include <algorithm>
#include <barrier>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "common/rng.hpp"
#include "sim/parallel_step.hpp"
#include "sim/train.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace sim_parallel_step_test {

using namespace p0sim::sim;

namespace {

bool same_bits(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

ModelConfig small_model() {
  ModelConfig c;
  c.vocab = 16;
  c.d_model = 16;
  c.heads = 2;
  c.layers = 2;
  c.d_ff = 32;
  c.seq_len = 8;
  return c;
}

std::vector<std::int32_t> random_rows(int batch, int seq_len, int vocab, std::uint64_t seed) {
  p0sim::PhiloxStream rng(seed, 0);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(batch) * static_cast<std::size_t>(seq_len + 1));
  for (auto& r : rows) r = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(vocab)));
  return rows;
}

}  // namespace

TEST_CASE("chunk_count depends on the config only and keeps small configs whole", "[sim][parallel]") {
  ModelConfig c;
  c.vocab = 64;
  c.d_model = 32;
  c.heads = 2;
  c.d_ff = 128;
  c.seq_len = 16;
  CHECK(chunk_count(c, 16) == 1);  // the smallest benchmark config: splitting does not pay
  c.d_model = 128;
  c.heads = 4;
  c.d_ff = 512;
  c.seq_len = 64;
  CHECK(chunk_count(c, 32) >= 2);  // the (C=128, T=64, B=32) config splits
  CHECK(chunk_count(c, 32) <= kMaxChunks);
  CHECK(chunk_count(c, 1) == 1);
}

TEST_CASE("the chunked step is bit-identical for 1, 2 and 3 threads and matches the whole batch", "[sim][parallel]") {
  ModelConfig c = small_model();
  c.mask = GENERATE(Mask::causal, Mask::prefix_bidirectional, Mask::bidirectional);
  c.bos = GENERATE(false, true);
  c.pos = GENERATE(PosEnc::none, PosEnc::absolute, PosEnc::rope);
  c.norm = GENERATE(Norm::rms, Norm::layer, Norm::none);
  CAPTURE(p0sim::enum_name(c.mask), c.bos, p0sim::enum_name(c.pos), p0sim::enum_name(c.norm));
  const int B = 7, chunks = 3;  // unequal chunks: 3, 2, 2 rows
  const auto rows = random_rows(B, c.seq_len, c.vocab, 5);

  Model<float> whole(c, B);
  whole.init(3);
  const double loss_whole = whole.forward(rows.data(), B);
  whole.zero_grad();
  whole.backward();

  std::vector<float> ref_grads;
  double ref_loss = 0;
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    Model<float> m(c, B);
    m.init(3);
    ParallelStep step(c, B, threads, chunks);
    REQUIRE(step.chunks() == chunks);
    REQUIRE(step.threads() == threads);
    double loss = 0;
    for (int rep = 0; rep < 2; ++rep) loss = step.forward_backward(m, rows.data());  // the pool is reused
    const auto g = m.grads();
    if (threads == 1) {
      ref_grads.assign(g.data(), g.data() + g.size());
      ref_loss = loss;
      CHECK(loss == Approx(loss_whole).epsilon(1e-5));
      const double rel = (g - whole.grads()).norm() / whole.grads().norm();
      CHECK(rel < 1e-5);
    } else {
      CHECK(loss == ref_loss);
      CHECK(same_bits(g.data(), ref_grads.data(), ref_grads.size()));
    }
  }
}

TEST_CASE("one chunk is the plain single-model step bit for bit", "[sim][parallel]") {
  const ModelConfig c = small_model();
  const int B = 4;
  const auto rows = random_rows(B, c.seq_len, c.vocab, 9);
  Model<float> a(c, B), b(c, B);
  a.init(1);
  b.init(1);
  const float la = a.forward(rows.data(), B);
  a.zero_grad();
  a.backward();
  ParallelStep step(c, B, 2, 1);
  REQUIRE(step.threads() == 1);
  const double lb = step.forward_backward(b, rows.data());
  CHECK(static_cast<double>(la) == lb);
  CHECK(same_bits(a.grads().data(), b.grads().data(), static_cast<std::size_t>(a.grads().size())));
}

TEST_CASE("train() gives bit-identical weights with --threads 1, 2 and 3", "[sim][parallel][train]") {
  TrainConfig c;
  c.model.vocab = 64;
  c.model.d_model = 64;
  c.model.heads = 4;
  c.model.layers = 2;
  c.model.d_ff = 256;
  c.model.seq_len = 32;
  c.model.bos = GENERATE(false, true);
  c.data.task = Task::firstrecall;
  c.data.vocab = 64;
  c.data.seq_len = 32;
  c.batch = 16;
  c.steps = 6;
  c.lr = 3e-3;
  c.clip = 1.0;
  c.seed = 4;
  CAPTURE(c.model.bos);
  REQUIRE(chunk_count(c.model, c.batch) >= 3);  // so the test exercises the split
  std::vector<float> ref;
  double ref_loss = 0;
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    c.threads = threads;
    Model<float> m(c.model, c.batch);
    const auto r = train(m, c);
    const auto p = m.params();
    if (threads == 1) {
      ref.assign(p.data(), p.data() + p.size());
      ref_loss = r.final_loss;
    } else {
      CHECK(r.final_loss == ref_loss);
      CHECK(same_bits(p.data(), ref.data(), ref.size()));
    }
  }
}

TEST_CASE("chunk_range splits the chunks into contiguous ranges in rank order", "[sim][parallel]") {
  const int chunks = GENERATE(1, 3, 7, 8);
  const int ranks = GENERATE(1, 2, 3, 5, 9);
  CAPTURE(chunks, ranks);
  int next = 0;
  for (int r = 0; r < ranks; ++r) {
    const auto [first, end] = chunk_range(chunks, r, ranks);
    CHECK(first == next);
    CHECK(end - first >= chunks / ranks);
    CHECK(end - first <= chunks / ranks + 1);
    next = end;
  }
  CHECK(next == chunks);
}

TEST_CASE("a step split across processes gives every process the one-process bits", "[sim][parallel]") {
  // Processes simulated by threads: each runs its own ParallelStep on its own model; the exchange
  // copies each process's own slots and losses into a shared table and back, between barriers,
  // as MPI_Allgatherv does between ranks.
  const ModelConfig c = small_model();
  const int B = 7, chunks = 3;
  const int ranks = GENERATE(2, 3, 4);  // 4 processes for 3 chunks: one computes nothing
  const int threads = GENERATE(1, 2);
  CAPTURE(ranks, threads);
  const auto rows = random_rows(B, c.seq_len, c.vocab, 9);

  Model<float> one(c, B);
  one.init(4);
  ParallelStep single(c, B, threads, chunks);
  const double loss_one = single.forward_backward(one, rows.data());

  const std::size_t nparams = static_cast<std::size_t>(one.params().size());
  std::vector<float> table(nparams * chunks);
  std::vector<double> losses(chunks);
  std::barrier sync(ranks);
  std::vector<std::vector<float>> grads(static_cast<std::size_t>(ranks));
  std::vector<double> loss(static_cast<std::size_t>(ranks));
  std::vector<std::thread> procs;
  for (int r = 0; r < ranks; ++r)
    procs.emplace_back([&, r] {
      ChunkExchange ex;
      ex.rank = r;
      ex.ranks = ranks;
      ex.gather = [&](float* slots, std::int64_t n, double* chunk_loss, int count) {
        const auto [first, end] = chunk_range(count, r, ranks);
        std::copy(slots + first * n, slots + end * n, table.begin() + first * n);
        std::copy(chunk_loss + first, chunk_loss + end, losses.begin() + first);
        sync.arrive_and_wait();
        std::copy(table.begin(), table.end(), slots);
        std::copy(losses.begin(), losses.end(), chunk_loss);
        sync.arrive_and_wait();
      };
      Model<float> m(c, B);
      m.init(4);
      ParallelStep step(c, B, threads, chunks, &ex);
      loss[static_cast<std::size_t>(r)] = step.forward_backward(m, rows.data());
      grads[static_cast<std::size_t>(r)].assign(m.grads().data(), m.grads().data() + nparams);
    });
  for (auto& p : procs) p.join();
  for (int r = 0; r < ranks; ++r) {
    CAPTURE(r);
    CHECK(loss[static_cast<std::size_t>(r)] == loss_one);
    CHECK(same_bits(grads[static_cast<std::size_t>(r)].data(), one.grads().data(), nparams));
  }
}

}  // namespace sim_parallel_step_test
