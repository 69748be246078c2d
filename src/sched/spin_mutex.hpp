// Internal: a test-and-test-and-set lock for short critical sections that
// are taken far more often than they are contended (the mpi transport's
// progress lock, polled by every idle worker on every round). Releasing it
// is a plain store; std::mutex's unlock is a locked exchange plus a waiter
// check, and in a profile of an idle 8-byte ping-pong pthread's trylock and
// unlock together were a fifth of each rank's cycles.
#pragma once
#include <atomic>

#include <sched.h>

#include "sched/cpu_relax.hpp"

namespace weft::detail {

class spin_mutex {
 public:
  bool try_lock() noexcept {
    return !held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire);
  }
  void lock() noexcept {
    for (int spins = 0; !try_lock(); ++spins) {
      if (spins < 64) {
        cpu_relax();
      } else {
        sched_yield();  // the holder may be descheduled (oversubscribed ranks)
        spins = 0;
      }
    }
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

}  // namespace weft::detail
