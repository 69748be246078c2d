#include <exception>

#include "weft/sched.hpp"

namespace weft {

void task_group::wait() {
  if (pending_.fetch_sub(1, std::memory_order_acq_rel) != 1) {
    // Run our own tasks from the bottom of this worker's deque first; the
    // rest are running elsewhere, so block until the last one fires done_.
    while (!done_.is_set() && detail::try_run_inline(this)) {
    }
    detail::wait_for(done_, this);
  }
  pending_.store(1, std::memory_order_relaxed);
  done_.reset();
  if (failed_.load(std::memory_order_acquire)) {
    std::exception_ptr e = std::move(error_);
    error_ = nullptr;
    failed_.store(false, std::memory_order_relaxed);
    std::rethrow_exception(e);
  }
}

void task_group::fail(std::exception_ptr e) noexcept {
  bool expected = false;
  if (failed_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) error_ = std::move(e);
}

}  // namespace weft
