#include "am/local_transport.hpp"

#include "sched/scheduler.hpp"

namespace weft::detail {

local_world::local_world(int nranks) {
  for (int r = 0; r < nranks; ++r) inboxes_.push_back(std::make_unique<inbox>());
}

void local_world::attach(int r, scheduler* s, am_dispatch_fn fn, void* ctx) {
  inbox& in = *inboxes_[static_cast<std::size_t>(r)];
  in.sched = s;
  in.dispatch = fn;
  in.ctx = ctx;
}

std::unique_ptr<am_transport> local_world::make_transport(int r) {
  return std::make_unique<local_transport>(*this, r);
}

void local_transport::send(int dest, am_message&& m) {
  auto& in = *world_.inboxes_[static_cast<std::size_t>(dest)];
  {
    std::lock_guard lock(in.mutex);
    in.queue.push_back(std::move(m));
    in.pending.store(in.queue.size(), std::memory_order_release);
  }
  in.sched->wake_one();  // an idle worker of the destination picks it up
}

bool local_transport::progress() {
  auto& in = *world_.inboxes_[static_cast<std::size_t>(rank_)];
  if (in.pending.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock consumer(in.progress_mutex, std::try_to_lock);
  if (!consumer.owns_lock()) return false;
  {
    std::lock_guard lock(in.mutex);
    if (in.queue.empty()) return false;
    batch_.swap(in.queue);
    in.pending.store(0, std::memory_order_relaxed);
  }
  for (auto& m : batch_) in.dispatch(in.ctx, std::move(m));
  batch_.clear();
  return true;
}

}  // namespace weft::detail
