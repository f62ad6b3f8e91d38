#include "sim/parallel_step.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

namespace p0sim::sim {

using Eigen::Index;

double row_flops(const ModelConfig& c) {
  const double C = c.d_model, F = c.d_ff, V = c.vocab, L = c.layers, P = c.positions();
  const double columns = c.mask == Mask::prefix_bidirectional ? P * (P + 1) / 2 : P;
  return 6.0 * (L * (4 * C * C + 2 * C * F) + V * C) * columns + 12.0 * L * P * P * C;
}

int chunk_count(const ModelConfig& c, int batch) {
  const double by_work = std::floor(static_cast<double>(batch) * row_flops(c) / kMinChunkFlops);
  const double n = std::min({by_work, static_cast<double>(kMaxChunks), static_cast<double>(batch)});
  return std::max(1, static_cast<int>(n));
}

std::pair<int, int> chunk_range(int chunks, int rank, int ranks) {
  auto first = [&](int r) { return r * (chunks / ranks) + std::min(r, chunks % ranks); };
  return {first(rank), first(rank + 1)};
}

// ---------------------------------------------------------------------------------------------------
ParallelStep::ParallelStep(const ModelConfig& config, int batch, int threads, int chunks, const ChunkExchange* exchange)
    : config_(config), batch_(batch) {
  if (batch < 1) throw std::invalid_argument("ParallelStep: batch must be >= 1");
  if (threads < 1) throw std::invalid_argument("ParallelStep: threads must be >= 1");
  const int n = chunks > 0 ? std::min(chunks, batch) : chunk_count(config, batch);
  chunk_rows_.resize(static_cast<std::size_t>(n));
  chunk_first_.resize(static_cast<std::size_t>(n));
  weights_.resize(static_cast<std::size_t>(n));
  chunk_loss_.assign(static_cast<std::size_t>(n), 0.0);
  int first = 0;
  for (int c = 0; c < n; ++c) {
    const int rows = batch / n + (c < batch % n ? 1 : 0);
    chunk_rows_[static_cast<std::size_t>(c)] = rows;
    chunk_first_[static_cast<std::size_t>(c)] = first;
    weights_[static_cast<std::size_t>(c)] = static_cast<float>(static_cast<double>(rows) / static_cast<double>(batch));
    first += rows;
  }
  if (n == 1) return;  // the plain single-model step: no replicas, no pool
  own_end_ = n;
  if (exchange != nullptr && exchange->ranks > 1) {
    if (!exchange->gather) throw std::invalid_argument("ParallelStep: an exchange of several processes needs gather");
    exchange_ = exchange;
    std::tie(own_begin_, own_end_) = chunk_range(n, exchange->rank, exchange->ranks);
  }
  const int t = std::min(threads, n);
  const int max_rows = chunk_rows_.front();
  for (int i = 0; i < t; ++i) replicas_.push_back(std::make_unique<Model<float>>(config, max_rows));
  slots_.resize(replicas_.front()->params().size(), n);
  pool_ = std::make_unique<ThreadPool>(t);
}

ParallelStep::~ParallelStep() = default;

int ParallelStep::threads() const { return pool_ ? pool_->size() : 1; }

void ParallelStep::compute_job(void* self_ptr, int thread) {
  auto& self = *static_cast<ParallelStep*>(self_ptr);
  Model<float>& replica = *self.replicas_[static_cast<std::size_t>(thread)];
  replica.params() = self.model_->params();
  const int end = self.own_end_;
  const int row_len = self.config_.seq_len + 1;
  for (int c = self.next_chunk_.fetch_add(1, std::memory_order_relaxed); c < end;
       c = self.next_chunk_.fetch_add(1, std::memory_order_relaxed)) {
    const auto cs = static_cast<std::size_t>(c);
    self.chunk_loss_[cs] = static_cast<double>(replica.forward(
        self.rows_ + static_cast<std::ptrdiff_t>(self.chunk_first_[cs]) * row_len, self.chunk_rows_[cs]));
    replica.zero_grad();
    replica.backward();
    self.slots_.col(c) = replica.grads();
  }
}

void ParallelStep::reduce_job(void* self_ptr, int thread) {
  auto& self = *static_cast<ParallelStep*>(self_ptr);
  const Index total = self.slots_.rows();
  const Index parts = self.pool_->size();
  // segments on 64-float boundaries; every element is reduced by the same loop whatever the split
  const Index per = ((total + parts - 1) / parts + 63) / 64 * 64;
  const Index begin = std::min(total, per * thread), end = std::min(total, begin + per);
  float* out = self.model_->grads().data();
  const int n = self.chunks();
  const float* w = self.weights_.data();
  const float* s0 = self.slots_.data();
  for (Index i = begin; i < end; ++i) out[i] = w[0] * s0[i];
  for (int c = 1; c < n; ++c) {
    const float* sc = self.slots_.data() + c * total;
    const float wc = w[c];
    for (Index i = begin; i < end; ++i) out[i] += wc * sc[i];
  }
}

double ParallelStep::forward_backward(Model<float>& model, const std::int32_t* rows) {
  if (chunks() == 1) {
    const double loss = static_cast<double>(model.forward(rows, batch_));
    model.zero_grad();
    model.backward();
    return loss;
  }
  if (model.params().size() != slots_.rows())
    throw std::invalid_argument("ParallelStep: model does not match the config");
  model_ = &model;
  rows_ = rows;
  next_chunk_.store(own_begin_, std::memory_order_relaxed);
  pool_->run(&ParallelStep::compute_job, this);
  if (exchange_ != nullptr) exchange_->gather(slots_.data(), slots_.rows(), chunk_loss_.data(), chunks());
  pool_->run(&ParallelStep::reduce_job, this);
  double loss = 0.0;
  for (int c = 0; c < chunks(); ++c)
    loss += static_cast<double>(chunk_rows_[static_cast<std::size_t>(c)]) / static_cast<double>(batch_) *
            chunk_loss_[static_cast<std::size_t>(c)];
  return loss;
}

}  // namespace p0sim::sim
