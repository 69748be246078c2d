#include "am/mpi/mpi_one_sided.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

#include <sched.h>
#include <unistd.h>

namespace weft::detail {

namespace {

/// Most bytes one MPI_Put or MPI_Get moves (MPI counts are ints); longer
/// transfers go in pieces.
constexpr std::size_t max_piece = std::size_t{1} << 30;

/// Hints for every window. The atomics wait for their result and puts and
/// gets are completed by flushes, so no ordering between accumulates is
/// needed; which_accumulate_ops (MPICH) names the operations used, so that
/// MPICH may pick network atomics when the network has all of them.
MPI_Info window_info() {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "accumulate_ordering", "none");
  MPI_Info_set(info, "which_accumulate_ops", "sum,replace,cswap");
  return info;
}

}  // namespace

mpi_one_sided::mpi_one_sided(MPI_Comm comm, spin_mutex& lock, am_transport& transport, bool passive)
    : job_comm_(comm), lock_(lock), transport_(transport), passive_(passive) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
}

mpi_one_sided::~mpi_one_sided() {
  std::lock_guard lock(lock_);
  const std::size_t n = registered_.load(std::memory_order_acquire);
  for (std::size_t k = 0; k < n; ++k) {
    MPI_Win_unlock_all(regions_[k].win);
    MPI_Win_free(&regions_[k].win);
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void mpi_one_sided::wait_for_every_rank() {
  MPI_Request req;
  std::unique_lock lock(lock_);
  if (comm_ == MPI_COMM_NULL) {
    // A communicator of its own, made at the first registration (at
    // start-up every collective costs, on an oversubscribed node most of
    // all): registrations' collectives then never meet the transport's.
    // The job's ranks register in the same order and make the transport's
    // collectives in the same order around them, so this one is safe.
    MPI_Comm_idup(job_comm_, &comm_, &req);
    wait_polling(req, lock);
  }
  MPI_Ibarrier(comm_, &req);
  wait_polling(req, lock);
}

void mpi_one_sided::wait_polling(MPI_Request& req, std::unique_lock<spin_mutex>& lock) {
  lock.unlock();
  for (int round = 0;; ++round) {
    int done = 0;
    lock.lock();
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;  // locked, as it came
    lock.unlock();
    transport_.progress();  // this rank's messages may be what another rank waits for
    if (round < 100) sched_yield();
    else usleep(50);
  }
}

one_sided_ops::region_key mpi_one_sided::register_region(void* base, std::size_t bytes) {
  const std::size_t key = registered_.load(std::memory_order_relaxed);
  if (key == max_regions) {
    std::fprintf(stderr, "weft: rank %d: more than %zu one-sided regions registered\n", rank_, max_regions);
    transport_.job_abort()(1);
  }
  // MPI_Win_create is collective and blocks: entered only once every rank
  // is here, the progress lock held through it stalls nobody.
  wait_for_every_rank();
  region& r = regions_[key];
  r.bytes.assign(static_cast<std::size_t>(size_), 0);
  r.pending.assign(static_cast<std::size_t>(size_), 0);
  const std::uint64_t mine = bytes;
  MPI_Info info = window_info();
  {
    std::lock_guard lock(lock_);
    // Over the caller's memory as it is: MPICH over UCX without a network
    // that pins memory registers nothing page by page, so a reserved heap
    // of which few pages are committed stays so (docs/PGAS.md).
    MPI_Win_create(base, static_cast<MPI_Aint>(bytes), 1, info, comm_, &r.win);
    MPI_Win_set_errhandler(r.win, MPI_ERRORS_ARE_FATAL);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, r.win);
    MPI_Allgather(&mine, 1, MPI_UINT64_T, r.bytes.data(), 1, MPI_UINT64_T, comm_);
  }
  MPI_Info_free(&info);
  registered_.store(key + 1, std::memory_order_release);
  return key;
}

MPI_Win mpi_one_sided::checked(const char* what, int rank, region_key key, std::size_t offset, std::size_t n,
                               bool word) const {
  const std::size_t regions = registered_.load(std::memory_order_acquire);
  const char* why = nullptr;
  if (rank < 0 || rank >= size_) why = "no such rank";
  else if (key >= regions) why = "no such region";
  else if (offset > regions_[key].bytes[static_cast<std::size_t>(rank)] ||
           n > regions_[key].bytes[static_cast<std::size_t>(rank)] - offset)
    why = "out of bounds";
  else if (word && offset % 8 != 0)
    why = "not 8-byte aligned";
  if (why == nullptr) return regions_[key].win;
  std::fprintf(stderr,
               "weft: rank %d: one-sided %s to rank %d, region %llu, bytes [%zu, %zu + %zu): %s (%d ranks, %zu "
               "regions)\n",
               rank_, what, rank, static_cast<unsigned long long>(key), offset, offset, n, why, size_, regions);
  transport_.job_abort()(1);
  std::abort();  // job_abort does not return
}

void mpi_one_sided::put(int rank, region_key region, std::size_t offset, const void* src, std::size_t n) {
  const MPI_Win win = checked("put", rank, region, offset, n);
  const auto* from = static_cast<const std::byte*>(src);
  for (std::size_t at = 0; at < n; at += max_piece) {
    const int len = static_cast<int>(std::min(max_piece, n - at));
    std::lock_guard lock(lock_);
    MPI_Put(from + at, len, MPI_BYTE, rank, static_cast<MPI_Aint>(offset + at), len, MPI_BYTE, win);
    regions_[region].pending[static_cast<std::size_t>(rank)] = 1;
  }
}

void mpi_one_sided::get(int rank, region_key region, std::size_t offset, void* dst, std::size_t n) {
  const MPI_Win win = checked("get", rank, region, offset, n);
  auto* to = static_cast<std::byte*>(dst);
  for (std::size_t at = 0; at < n; at += max_piece) {
    const int len = static_cast<int>(std::min(max_piece, n - at));
    std::lock_guard lock(lock_);
    MPI_Get(to + at, len, MPI_BYTE, rank, static_cast<MPI_Aint>(offset + at), len, MPI_BYTE, win);
    regions_[region].pending[static_cast<std::size_t>(rank)] = 1;
  }
}

std::uint64_t mpi_one_sided::fetch_and_op(int rank, region_key key, std::size_t offset, std::uint64_t operand,
                                          MPI_Op op) {
  const MPI_Win win = checked(op == MPI_SUM ? "fetch_add" : "swap", rank, key, offset, 8, true);
  std::uint64_t old = 0;
  std::lock_guard lock(lock_);
  MPI_Fetch_and_op(&operand, &old, MPI_UINT64_T, rank, static_cast<MPI_Aint>(offset), op, win);
  MPI_Win_flush_local(rank, win);  // the old value is here
  return old;
}

std::uint64_t mpi_one_sided::fetch_add(int rank, region_key region, std::size_t offset, std::uint64_t add) {
  return fetch_and_op(rank, region, offset, add, MPI_SUM);
}

std::uint64_t mpi_one_sided::swap(int rank, region_key region, std::size_t offset, std::uint64_t value) {
  return fetch_and_op(rank, region, offset, value, MPI_REPLACE);
}

std::uint64_t mpi_one_sided::compare_swap(int rank, region_key region, std::size_t offset, std::uint64_t expected,
                                          std::uint64_t desired) {
  const MPI_Win win = checked("compare_swap", rank, region, offset, 8, true);
  std::uint64_t old = 0;
  std::lock_guard lock(lock_);
  MPI_Compare_and_swap(&desired, &expected, &old, MPI_UINT64_T, rank, static_cast<MPI_Aint>(offset), win);
  MPI_Win_flush_local(rank, win);
  return old;
}

void mpi_one_sided::flush(int rank) {
  const std::size_t n = registered_.load(std::memory_order_acquire);
  for (std::size_t k = 0; k < n; ++k) {
    std::lock_guard lock(lock_);  // per window: other threads' calls go in between
    regions_[k].pending[static_cast<std::size_t>(rank)] = 0;
    MPI_Win_flush(rank, regions_[k].win);
  }
}

void mpi_one_sided::flush_all() {
  const std::size_t n = registered_.load(std::memory_order_acquire);
  for (std::size_t k = 0; k < n; ++k) {
    // One hold per window for the whole scan: a rank found clean here is
    // either clean or being flushed by a thread that holds the lock until
    // its flush is done, so no operation issued before this call is left
    // behind. Not MPI_Win_flush_all: see the header.
    std::lock_guard lock(lock_);
    region& r = regions_[k];
    for (std::size_t rank = 0; rank < r.pending.size(); ++rank)
      if (std::exchange(r.pending[rank], 0) != 0) MPI_Win_flush(static_cast<int>(rank), r.win);
  }
}

}  // namespace weft::detail
