// The ranks of this process, by global rank: rank contexts enter on
// construction and leave on destruction, so the layers that reach an
// in-process rank directly (rma) find it without knowing how the runtime
// made the ranks. A process's ranks are consecutive (smp: 0..N-1; mpi: one).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "am/rank_comm.hpp"

namespace weft::detail {

namespace {

// --weft:ranks is at most 1024, and an mpi process has one rank.
constexpr int max_local_ranks = 1024;
std::atomic<rank_comm*> g_local[max_local_ranks];
std::atomic<int> g_first_rank{0};  // global rank of g_local[0]
std::mutex g_enter_mutex;
int g_live = 0;  // contexts alive (under g_enter_mutex)

}  // namespace

rank_comm::rank_comm(int r, int n, scheduler* s) : rank(r), nranks(n), sched(s) {
  std::lock_guard lock(g_enter_mutex);
  if (g_live == 0) g_first_rank.store(r, std::memory_order_relaxed);
  const int i = r - g_first_rank.load(std::memory_order_relaxed);
  if (i < 0 || i >= max_local_ranks || g_local[i].load(std::memory_order_relaxed) != nullptr) {
    std::fprintf(stderr, "weft: rank %d cannot join this process's ranks (at most %d consecutive ranks)\n", r,
                 max_local_ranks);
    std::abort();
  }
  g_local[i].store(this, std::memory_order_release);
  ++g_live;
}

rank_comm::~rank_comm() {
  std::lock_guard lock(g_enter_mutex);
  g_local[rank - g_first_rank.load(std::memory_order_relaxed)].store(nullptr, std::memory_order_release);
  --g_live;
}

rank_comm* in_process_comm(int r) noexcept {
  const int i = r - g_first_rank.load(std::memory_order_relaxed);
  if (i < 0 || i >= max_local_ranks) return nullptr;
  return g_local[i].load(std::memory_order_acquire);
}

}  // namespace weft::detail
