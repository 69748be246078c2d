// Internal: one-sided operations of the mpi backend over MPI-3 RMA.
//
// One window per registered region (MPI_Win_create over the caller's
// memory, displacement unit 1, so a region offset is the displacement),
// opened once for passive target with MPI_Win_lock_all and closed at
// shutdown. Puts and gets are MPI_Put / MPI_Get, completed by
// MPI_Win_flush(rank) or MPI_Win_flush_all; the atomics are MPI_Fetch_and_op
// (MPI_SUM, MPI_REPLACE) and MPI_Compare_and_swap on MPI_UINT64_T, each
// followed by MPI_Win_flush_local so that it returns the old value.
// flush_all is MPI_Win_flush for each rank with puts or gets since its last
// flush, not MPI_Win_flush_all: MPICH 4.0.2's MPI_Win_flush_all returns
// before an MPI_Get of some 384 KiB or more has arrived (its bytes land
// later, in memory the caller may have reused), MPI_Win_flush does not
// (docs/PGAS.md).
//
// MPI runs MPI_THREAD_SERIALIZED: every MPI call here is made under the
// transport's progress lock, held for one call (or one call and its local
// flush), never across a whole batch. A flush, and an atomic's local flush,
// hold it until MPI has the target's answer (MPI has no non-blocking flush):
// meanwhile MPI progresses inside the call, but this rank's other workers
// skip their progress passes.
//
// Whether an operation completes without the target's CPU depends on the
// MPI library: with MPICH 4.0 (ch4:ucx) every one of them waits for the
// target to enter MPI (docs/PGAS.md, "One-sided operations on the mpi
// backend").
#pragma once
#include <mpi.h>

#include <array>
#include <atomic>
#include <mutex>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "am/transport.hpp"
#include "sched/spin_mutex.hpp"

namespace weft::detail {

class mpi_one_sided final : public one_sided_ops {
 public:
  /// Regions registered per transport at most.
  static constexpr std::size_t max_regions = 64;

  /// `comm`: the job's ranks; `lock`: the transport's progress lock;
  /// `transport`: progressed while a registration waits for the other ranks.
  /// `passive`: what target_passive() says (--weft:mpi-rma=on: the user
  /// knows the MPI library performs RMA without the target).
  mpi_one_sided(MPI_Comm comm, spin_mutex& lock, am_transport& transport, bool passive);
  /// Closes and frees every window (collective: every rank's transport
  /// shuts down).
  ~mpi_one_sided() override;

  region_key register_region(void* base, std::size_t bytes) override;
  void put(int rank, region_key region, std::size_t offset, const void* src, std::size_t n) override;
  void get(int rank, region_key region, std::size_t offset, void* dst, std::size_t n) override;
  std::uint64_t fetch_add(int rank, region_key region, std::size_t offset, std::uint64_t add) override;
  std::uint64_t compare_swap(int rank, region_key region, std::size_t offset, std::uint64_t expected,
                             std::uint64_t desired) override;
  std::uint64_t swap(int rank, region_key region, std::size_t offset, std::uint64_t value) override;
  void flush(int rank) override;
  void flush_all() override;
  bool target_passive() const noexcept override { return passive_; }

 private:
  struct region {
    MPI_Win win = MPI_WIN_NULL;
    std::vector<std::uint64_t> bytes;  // by rank: how long its part is
    /// By rank: a put or get towards it was issued since its last flush
    /// (written and read under the progress lock).
    std::vector<char> pending;
  };
  /// The window of `key`, after checking that [offset, offset + n) lies in
  /// `rank`'s part of it and, for a `word`, is 8-byte aligned (a clear
  /// error ends the job otherwise).
  MPI_Win checked(const char* what, int rank, region_key key, std::size_t offset, std::size_t n,
                  bool word = false) const;
  /// MPI_Fetch_and_op of `operand` with `op` and a local flush.
  std::uint64_t fetch_and_op(int rank, region_key key, std::size_t offset, std::uint64_t operand, MPI_Op op);
  /// Waits until every rank has called register_region, progressing the
  /// transport meanwhile (a rank may need this rank's messages to get there).
  void wait_for_every_rank();
  /// Waits for `req`, made under `lock` (held on entry and on return),
  /// dropping the lock and progressing the transport between tests.
  void wait_polling(MPI_Request& req, std::unique_lock<spin_mutex>& lock);

  MPI_Comm job_comm_;  // the transport's
  MPI_Comm comm_ = MPI_COMM_NULL;  // registrations' own, from the first one on
  spin_mutex& lock_;
  am_transport& transport_;
  int rank_ = 0, size_ = 1;
  std::array<region, max_regions> regions_;
  std::atomic<std::size_t> registered_{0};  // regions_[0, registered_) are in use
  bool passive_;
};

}  // namespace weft::detail
