#pragma once
// How p0sim spreads work over MPI ranks. In a build without MPI (P0SIM_WITH_MPI unset), or when
// not launched by mpirun, a Session is one process: rank 0 of 1.
//
// `p0sim sweep`: rank 0 owns the sweep directory and hands run indices to the other ranks one at a
// time (a rank gets its next run when it returns a row, so long and short runs balance), while
// its own threads compute runs too; the rows reach rank 0's journal exactly as local threads'
// rows do, so results.csv has the same bytes as a single-process sweep.
//
// `p0sim train`: one run, each step's batch chunks split across the ranks (chunk_exchange), every
// rank holding the same weights; rank 0 alone writes the run directory. The result has the bits
// of a single-process run.
//
// Compiled twice (CMakeLists.txt: P0SIM_SESSION_SRC), with and without MPI, outside the study
// library, so the MPI executable reuses every other object.
#include <cstddef>
#include <functional>
#include <vector>

#include "sim/parallel_step.hpp"
#include "study/sweep.hpp"

namespace p0sim::study::mpi {

class Session {
 public:
  Session();   // MPI_Init_thread when launched by mpirun with MPI built in
  ~Session();  // releases waiting ranks if rank 0 never distributed (bad input), MPI_Finalize
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  // Rank 0: runs `jobs` on `local_threads` threads of its own (the project's thread pool, whose
  // calling thread polls for the other ranks' rows) and on every other rank; calls
  // on_done (under a lock, on rank 0 only) as rows arrive; rethrows rank 0's first failure.
  // Other ranks: compute what rank 0 sends until told to stop (a failure aborts the job).
  void distribute(const std::vector<std::size_t>& jobs, int local_threads,
                  const std::function<sweep::JobResult(std::size_t)>& job,
                  const std::function<void(std::size_t, const sweep::JobResult&)>& on_done);

  // Every rank: rank 0's `ok`. Rank 0 checks a run's inputs and prepares its directory alone; the
  // others wait here for its word, so bad input ends every rank (exit 2) instead of leaving them in
  // the first step's exchange.
  bool root_ok(bool ok);
  // The exchange that splits one run's steps across every rank: each rank's chunk gradients and
  // losses gathered to all (MPI_Allgatherv, main thread only). One rank: nothing to exchange.
  // A failure on any rank once steps have begun aborts the job (MPI_Abort): the others would wait.
  const sim::ChunkExchange& chunk_exchange();

 private:
  int rank_ = 0, size_ = 1;
  // Read only where MPI is compiled in (P0SIM_WITH_MPI).
  [[maybe_unused]] bool initialised_ = false, distributed_ = false;
  sim::ChunkExchange exchange_;
};

}  // namespace p0sim::study::mpi
