// Internal: how many operations of one kind a rank has in flight, and
// waiting until there are none (fence, ompx_waitRMA). Operations that
// complete on the calling thread (direct access) are never counted.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "weft/sched.hpp"

namespace weft::pgas::detail {

class op_counter {
 public:
  void started() noexcept { n_.fetch_add(1, std::memory_order_relaxed); }
  /// Wakes the waiters when this was the last one.
  void finished() {
    if (n_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    std::vector<promise<void>> wake;
    {
      std::lock_guard lock(mutex_);
      if (n_.load(std::memory_order_acquire) != 0) return;
      wake.swap(waiters_);
    }
    for (auto& p : wake) p.set_value();
  }
  /// Ready once nothing is in flight (operations started meanwhile are
  /// waited for too).
  future<void> idle() {
    if (n_.load(std::memory_order_acquire) == 0) return make_ready_future();
    std::lock_guard lock(mutex_);
    if (n_.load(std::memory_order_acquire) == 0) return make_ready_future();
    waiters_.emplace_back();
    return waiters_.back().get_future();
  }
  std::int64_t in_flight() const noexcept { return n_.load(std::memory_order_acquire); }

 private:
  std::atomic<std::int64_t> n_{0};
  std::mutex mutex_;
  std::vector<promise<void>> waiters_;
};

}  // namespace weft::pgas::detail
