#pragma once
// The project's one thread pool: a fixed set of threads, the caller counted as thread 0. The
// training step splits a batch across it (sim/parallel_step.hpp), the Monte Carlo splits its
// blocks across it (theory/cone_mc.cpp), and sweeps and experiments run one job per thread on it
// (study/). Which thread ran what never decides a result: every user writes its results into
// slots indexed by the work item, never by the thread.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace p0sim {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads - 1 workers; the caller is the other one
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Every thread t in 0..size()-1 calls job(ctx, t) once; returns when all have. No allocation,
  // so the training step can call it every step.
  void run(void (*job)(void*, int), void* ctx);
  // Same with a callable: f(t) on every thread t. `f` must not throw (catch inside and rethrow
  // after run_each returns: a worker thread cannot carry an exception).
  template <typename F>
  void run_each(F&& f) {
    using Fn = std::remove_reference_t<F>;
    run([](void* ctx, int t) { (*static_cast<Fn*>(ctx))(t); }, static_cast<void*>(&f));
  }

 private:
  void worker(int id);
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  std::uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  void (*job_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace p0sim
