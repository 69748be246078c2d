#include "am/ucx/ucx_bootstrap.hpp"

#include "am/mpi/mpi_init.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <sched.h>
#include <unistd.h>

namespace weft::detail {

namespace {

MPI_Comm& as_comm(void*& p) { return *static_cast<MPI_Comm*>(p); }

/// Tests `req` until it completes, keeping UCX moving meanwhile; after a
/// while it naps between tests (a rank that is done waits here for the
/// slowest, whose workers need the cores).
void wait_moving(MPI_Request& req, const mpi_bootstrap::keep_moving_fn& keep_moving) {
  for (int round = 0;; ++round) {
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (keep_moving) keep_moving();
    if (round < 100) sched_yield();
    else usleep(50);
  }
}

}  // namespace

mpi_bootstrap::mpi_bootstrap() : comm_(new MPI_Comm(MPI_COMM_NULL)) {
  init_mpi_once();
  MPI_Comm_dup(MPI_COMM_WORLD, &as_comm(comm_));
  MPI_Comm_set_errhandler(as_comm(comm_), MPI_ERRORS_ARE_FATAL);
  MPI_Comm_rank(as_comm(comm_), &rank_);
  MPI_Comm_size(as_comm(comm_), &size_);
}

mpi_bootstrap::~mpi_bootstrap() {
  MPI_Comm_free(&as_comm(comm_));
  delete static_cast<MPI_Comm*>(comm_);
}

std::vector<std::vector<std::byte>> mpi_bootstrap::allgather(std::span<const std::byte> mine,
                                                             const keep_moving_fn& keep_moving) {
  const auto n = static_cast<std::size_t>(size_);
  std::vector<int> lengths(n), offsets(n);
  const int my_length = static_cast<int>(mine.size());
  MPI_Request req;
  MPI_Iallgather(&my_length, 1, MPI_INT, lengths.data(), 1, MPI_INT, as_comm(comm_), &req);
  wait_moving(req, keep_moving);
  int total = 0;
  for (std::size_t r = 0; r < n; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<std::byte> all(static_cast<std::size_t>(total));
  MPI_Iallgatherv(mine.data(), my_length, MPI_BYTE, all.data(), lengths.data(), offsets.data(), MPI_BYTE,
                  as_comm(comm_), &req);
  wait_moving(req, keep_moving);
  std::vector<std::vector<std::byte>> by_rank(n);
  for (std::size_t r = 0; r < n; ++r)
    by_rank[r].assign(all.begin() + offsets[r], all.begin() + offsets[r] + lengths[r]);
  return by_rank;
}

std::array<std::uint64_t, 3> mpi_bootstrap::sum(std::array<std::uint64_t, 3> local,
                                                const keep_moving_fn& keep_moving) {
  std::array<std::uint64_t, 3> global{};
  MPI_Request req;
  MPI_Iallreduce(local.data(), global.data(), 3, MPI_UINT64_T, MPI_SUM, as_comm(comm_), &req);
  wait_moving(req, keep_moving);
  return global;
}

void mpi_bootstrap::barrier(const keep_moving_fn& keep_moving) {
  MPI_Request req;
  MPI_Ibarrier(as_comm(comm_), &req);
  wait_moving(req, keep_moving);
}

}  // namespace weft::detail
