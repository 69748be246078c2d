// Where a rank's idle workers sleep: how many sleep, and the futex word they
// wait on. A scheduler has one of its own; the mpi backend gives it one in
// memory shared by the processes of a node instead, so that a rank writing
// a frame into another rank's node ring can wake that rank's sleeping
// workers (am/mpi/node_rings.hpp). Without it a message to a sleeping rank
// waited for the end of the rank's nap, which on an oversubscribed node
// (naps of hundreds of microseconds) made every remote call ~100x slower.
#pragma once
#include <atomic>
#include <cstdint>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <ctime>

#include "sched/fence.hpp"

namespace weft::detail {

struct sleep_slot {
  alignas(64) std::atomic<std::uint32_t> sleepers{0};
  std::atomic<std::uint32_t> epoch{0};  // the futex word: bumped by every wake-up
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "a sleep slot may be shared between processes");

/// Waits on `word` while it holds `expected`, at most `timeout_ns` (0: no
/// limit). `shared`: the word may be mapped by other processes.
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, long timeout_ns,
                       bool shared = false) noexcept {
  timespec ts{timeout_ns / 1000000000L, timeout_ns % 1000000000L};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, expected,
          timeout_ns > 0 ? &ts : nullptr, nullptr, 0);
}
inline void futex_wake(std::atomic<std::uint32_t>& word, int n, bool shared = false) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, n, nullptr,
          nullptr, 0);
}

/// Wakes one sleeper of a shared slot after the caller published work for
/// it (a ring record) from another process. The full fence pairs with the
/// sleeper's increment of `sleepers` before its last look: either this load
/// sees the sleeper, or the sleeper's look sees the work. (The asymmetric
/// fence pair works only within one process.)
inline void wake_shared_sleeper(sleep_slot& s) noexcept {
  full_fence();
  if (s.sleepers.load(std::memory_order_relaxed) == 0) [[likely]]
    return;
  s.epoch.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(s.epoch, 1, true);
}

}  // namespace weft::detail
