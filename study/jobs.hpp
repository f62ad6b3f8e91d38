#pragma once
// Independent jobs (the runs of a sweep or an experiment) on the project's thread pool, one job
// per thread at a time. Jobs write their results into slots indexed by the job, so which thread
// ran a job never shows in a result.
#include <cstddef>
#include <functional>
#include <vector>

namespace p0sim::study {

// Runs job(i) for every i in `jobs` on `threads` threads (the calling thread included).
// `on_done(i, thread)` runs under a lock as each job finishes. After the first failure no new job
// starts; the first failure (in `jobs` order) is rethrown once the running jobs end.
void run_jobs(const std::vector<std::size_t>& jobs, int threads, const std::function<void(std::size_t)>& job,
              const std::function<void(std::size_t)>& on_done);
void run_jobs(const std::vector<std::size_t>& jobs, int threads, const std::function<void(std::size_t, int)>& job,
              const std::function<void(std::size_t, int)>& on_done);

}  // namespace p0sim::study
