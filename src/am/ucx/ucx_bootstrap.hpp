// Internal: what the ucx backend asks of MPI. UCX moves every message and
// one-sided operation; MPI (always there when mpiexec or srun started the
// job) only starts the job: it names the ranks, carries the blobs UCX needs
// to connect them (worker addresses, packed remote keys), sums the
// quiescence counters and holds the barrier before teardown. Every wait
// here keeps UCX moving (`keep_moving`): a rank waiting in MPI may be the
// one another rank's UCX operation needs to answer.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace weft::detail {

class mpi_bootstrap {
 public:
  /// Called between tests of a pending MPI request.
  using keep_moving_fn = std::function<void()>;

  /// Initializes MPI if needed (once per process, MPI_THREAD_SERIALIZED;
  /// MPI_Finalize runs at exit) and takes a communicator of its own.
  mpi_bootstrap();
  ~mpi_bootstrap();
  mpi_bootstrap(const mpi_bootstrap&) = delete;
  mpi_bootstrap& operator=(const mpi_bootstrap&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

  /// Every rank's `mine` (of any length), by rank. Collective.
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine, const keep_moving_fn& keep_moving);
  /// The job-wide sum of `local`. Collective.
  std::array<std::uint64_t, 3> sum(std::array<std::uint64_t, 3> local, const keep_moving_fn& keep_moving);
  /// Returns once every rank called it. Collective.
  void barrier(const keep_moving_fn& keep_moving);

 private:
  void* comm_;  // MPI_Comm (kept out of this header: the runtime includes it without <mpi.h>)
  int rank_ = 0, size_ = 1;
};

}  // namespace weft::detail
