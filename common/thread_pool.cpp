#include "common/thread_pool.hpp"

#include <stdexcept>

namespace p0sim {

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) throw std::invalid_argument("ThreadPool: threads must be >= 1");
  workers_.reserve(static_cast<std::size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker(int id) {
  std::uint64_t seen = 0;
  for (;;) {
    void (*job)(void*, int);
    void* ctx;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      ctx = ctx_;
    }
    job(ctx, id);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::run(void (*job)(void*, int), void* ctx) {
  if (workers_.empty()) {
    job(ctx, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = job;
    ctx_ = ctx;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  start_cv_.notify_all();
  job(ctx, 0);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
}

}  // namespace p0sim
