// Internal: an in-order queue of jobs on a rank's workers (a stream). Each
// job runs as a task once the job before it has finished; nothing polls:
// the finished job's future wakes the next one.
#pragma once
#include <functional>
#include <mutex>
#include <utility>

#include "weft/future.hpp"

namespace weft::detail {

class serial_queue {
 public:
  /// Appends `job`; the future is ready (or holds its exception) when it ran.
  shared_future<void> submit(std::function<void()> job) {
    std::lock_guard g(mutex_);
    tail_ = tail_.then([job = std::move(job)](shared_future<void>) { job(); }).share();
    return tail_;
  }

 private:
  std::mutex mutex_;
  shared_future<void> tail_ = make_ready_future().share();
};

}  // namespace weft::detail
