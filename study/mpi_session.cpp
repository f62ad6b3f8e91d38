#include "study/mpi_session.hpp"

#include <cstdlib>
#include <string>

#include "common/errors.hpp"

#ifdef P0SIM_WITH_MPI
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/thread_pool.hpp"
#endif

namespace p0sim::study::mpi {

#ifndef P0SIM_WITH_MPI

// Under mpirun without MPI built in, every rank would run the whole sweep into the same
// directory: refuse instead.
Session::Session() {
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (world != nullptr && std::string(world) != "1")
    throw UsageError("mpirun",
                     "this p0sim is built without MPI; build it with `cmake --preset mpi` (build-mpi/p0sim), "
                     "or use --shard i/N");
}
Session::~Session() = default;
void Session::distribute(const std::vector<std::size_t>&, int, const std::function<sweep::JobResult(std::size_t)>&,
                         const std::function<void(std::size_t, const sweep::JobResult&)>&) {}
bool Session::root_ok(bool ok) { return ok; }
const sim::ChunkExchange& Session::chunk_exchange() { return exchange_; }

#else

namespace {

constexpr int kTagWork = 1;    // rank 0 -> worker: one uint64 run index
constexpr int kTagStop = 2;    // rank 0 -> worker: no more runs
constexpr int kTagResult = 3;  // worker -> rank 0: uint64 run, double wall seconds, row bytes

// Launched by mpirun (OpenMPI, or a PMI launcher)? A plain `p0sim sweep` never initialises MPI,
// so the MPI build behaves exactly like the default one outside mpirun.
bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

void send_stop(int to) { MPI_Send(nullptr, 0, MPI_BYTE, to, kTagStop, MPI_COMM_WORLD); }

void send_work(int to, std::uint64_t run) { MPI_Send(&run, 1, MPI_UINT64_T, to, kTagWork, MPI_COMM_WORLD); }

}  // namespace

Session::Session() {
  if (!launched_by_mpirun()) return;
  int provided = 0;
  // Only the main thread calls MPI; rank 0's compute threads never do.
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  initialised_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Session::~Session() {
  if (!initialised_) return;
  // A rank failing while the others are in a step's exchange: they would wait for it forever.
  if (exchange_.ranks > 1 && std::uncaught_exceptions() > 0) MPI_Abort(MPI_COMM_WORLD, 1);
  exchange_.gather = nullptr;  // frees the exchange's MPI datatype while MPI is still up
  // Rank 0 failed before handing out work (e.g. a non-empty --out): the workers wait for their
  // first message; tell them to stop so every rank ends and mpirun returns rank 0's exit code.
  if (rank_ == 0 && !distributed_)
    for (int r = 1; r < size_; ++r) send_stop(r);
  MPI_Finalize();
}

bool Session::root_ok(bool ok) {
  distributed_ = true;  // every rank is here: none waits for a sweep's stop message
  if (size_ == 1) return ok;
  int word = ok ? 1 : 0;
  MPI_Bcast(&word, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return word != 0;
}

const sim::ChunkExchange& Session::chunk_exchange() {
  if (size_ == 1 || exchange_.ranks > 1) return exchange_;
  exchange_.rank = rank_;
  exchange_.ranks = size_;
  // The layout of a step's exchange, built at the first step and kept: one run's steps all have
  // the same chunks and parameter count, so later steps allocate nothing.
  struct Layout {
    std::int64_t nparams = -1;
    int chunks = -1;
    MPI_Datatype column = MPI_DATATYPE_NULL;  // one chunk's gradient as one MPI element
    std::vector<int> counts, firsts;          // per rank, in chunks
    ~Layout() {
      if (column != MPI_DATATYPE_NULL) MPI_Type_free(&column);
    }
  };
  exchange_.gather = [this, layout = std::make_shared<Layout>()](float* slots, std::int64_t nparams, double* chunk_loss,
                                                                 int chunks) {
    Layout& l = *layout;
    if (l.nparams != nparams || l.chunks != chunks) {
      if (l.column != MPI_DATATYPE_NULL) MPI_Type_free(&l.column);
      MPI_Type_contiguous(static_cast<int>(nparams), MPI_FLOAT, &l.column);
      MPI_Type_commit(&l.column);
      l.counts.assign(static_cast<std::size_t>(size_), 0);
      l.firsts.assign(static_cast<std::size_t>(size_), 0);
      for (int r = 0; r < size_; ++r) {
        const auto [first, end] = sim::chunk_range(chunks, r, size_);
        l.firsts[static_cast<std::size_t>(r)] = first;
        l.counts[static_cast<std::size_t>(r)] = end - first;
      }
      l.nparams = nparams;
      l.chunks = chunks;
    }
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, slots, l.counts.data(), l.firsts.data(), l.column,
                   MPI_COMM_WORLD);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, chunk_loss, l.counts.data(), l.firsts.data(), MPI_DOUBLE,
                   MPI_COMM_WORLD);
  };
  return exchange_;
}

void Session::distribute(const std::vector<std::size_t>& jobs, int local_threads,
                         const std::function<sweep::JobResult(std::size_t)>& job,
                         const std::function<void(std::size_t, const sweep::JobResult&)>& on_done) {
  distributed_ = true;
  if (rank_ != 0) {
    std::vector<char> buffer;
    for (;;) {
      MPI_Status status;
      std::uint64_t run = 0;
      MPI_Recv(&run, 1, MPI_UINT64_T, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      if (status.MPI_TAG == kTagStop) return;
      try {
        const double start = sweep::now_seconds();
        sweep::JobResult r = job(static_cast<std::size_t>(run));
        r.wall_seconds = sweep::now_seconds() - start;
        buffer.resize(sizeof run + sizeof r.wall_seconds + r.row.size());
        std::memcpy(buffer.data(), &run, sizeof run);
        std::memcpy(buffer.data() + sizeof run, &r.wall_seconds, sizeof r.wall_seconds);
        std::memcpy(buffer.data() + sizeof run + sizeof r.wall_seconds, r.row.data(), r.row.size());
        MPI_Send(buffer.data(), static_cast<int>(buffer.size()), MPI_BYTE, 0, kTagResult, MPI_COMM_WORLD);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "p0sim: run failed (rank %d): %s\n", rank_, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }

  // Rank 0: a shared cursor over `jobs`, read by its own compute threads and by the MPI loop.
  std::mutex mutex;  // guards next, on_done and the first error
  std::size_t next = 0;
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  auto take = [&]() -> std::optional<std::size_t> {
    std::lock_guard<std::mutex> lock(mutex);
    if (failed.load() || next >= jobs.size()) return std::nullopt;
    return jobs[next++];
  };
  auto local_worker = [&](int thread) {
    while (auto run = take()) {
      try {
        const double start = sweep::now_seconds();
        sweep::JobResult r = job(*run);
        r.wall_seconds = sweep::now_seconds() - start;
        r.worker = std::to_string(thread);
        r.worker.insert(0, "r0t");  // not "r0t" + ...: GCC 12 -Wrestrict false positive
        std::lock_guard<std::mutex> lock(mutex);
        on_done(*run, r);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        failed.store(true);
      }
    }
  };

  // Every other rank gets its first run before rank 0's own threads start taking runs.
  int busy = 0;
  for (int r = 1; r < size_; ++r) {
    if (auto run = take()) {
      send_work(r, *run);
      ++busy;
    } else {
      send_stop(r);
    }
  }
  // Thread 0 is the caller, the one thread that calls MPI (MPI_THREAD_FUNNELED): it collects the
  // other ranks' rows while threads 1.. compute runs.
  auto collect = [&] {
    std::vector<char> buffer;
    while (busy > 0) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &flag, &status);
      if (!flag) {
        // Polling with a short sleep instead of a blocking receive: OpenMPI's blocking receive
        // spins, which would take a core from rank 0's own compute threads.
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      buffer.resize(static_cast<std::size_t>(bytes));
      MPI_Recv(buffer.data(), bytes, MPI_BYTE, status.MPI_SOURCE, kTagResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::uint64_t run = 0;
      sweep::JobResult r;
      std::memcpy(&run, buffer.data(), sizeof run);
      std::memcpy(&r.wall_seconds, buffer.data() + sizeof run, sizeof r.wall_seconds);
      r.row.assign(buffer.data() + sizeof run + sizeof r.wall_seconds,
                   buffer.size() - sizeof run - sizeof r.wall_seconds);
      r.worker = std::to_string(status.MPI_SOURCE);
      r.worker.insert(0, 1, 'r');
      r.worker += "t0";
      {
        std::lock_guard<std::mutex> lock(mutex);
        try {
          on_done(static_cast<std::size_t>(run), r);
        } catch (...) {
          if (!error) error = std::current_exception();
          failed.store(true);
        }
      }
      if (auto next_run = take()) {
        send_work(status.MPI_SOURCE, *next_run);
      } else {
        send_stop(status.MPI_SOURCE);
        --busy;
      }
    }
  };
  ThreadPool pool(std::max(1, local_threads) + 1);
  pool.run_each([&](int thread) {
    if (thread == 0) {
      try {
        collect();
      } catch (const std::exception& e) {
        // The other ranks wait for rank 0's next message: end the whole job rather than hang.
        std::fprintf(stderr, "p0sim: run failed (rank 0): %s\n", e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    } else {
      local_worker(thread - 1);
    }
  });
  if (error) std::rethrow_exception(error);
}

#endif

}  // namespace p0sim::study::mpi
