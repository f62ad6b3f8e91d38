#include "study/jobs.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

#include "common/thread_pool.hpp"

namespace p0sim::study {

void run_jobs(const std::vector<std::size_t>& jobs, int threads, const std::function<void(std::size_t, int)>& job,
              const std::function<void(std::size_t, int)>& on_done) {
  std::vector<std::exception_ptr> errors(jobs.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex done_mutex;
  ThreadPool pool(std::max(1, std::min<int>(threads, static_cast<int>(jobs.size()))));
  pool.run_each([&](int thread) {
    for (std::size_t j; !failed.load() && (j = next.fetch_add(1)) < jobs.size();) {
      try {
        job(jobs[j], thread);
        std::lock_guard<std::mutex> lock(done_mutex);
        on_done(jobs[j], thread);
      } catch (...) {
        errors[j] = std::current_exception();
        failed.store(true);
      }
    }
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

void run_jobs(const std::vector<std::size_t>& jobs, int threads, const std::function<void(std::size_t)>& job,
              const std::function<void(std::size_t)>& on_done) {
  run_jobs(
      jobs, threads, [&](std::size_t j, int) { job(j); }, [&](std::size_t j, int) { on_done(j); });
}

}  // namespace p0sim::study
