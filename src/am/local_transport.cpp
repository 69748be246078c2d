#include "am/local_transport.hpp"

#include "sched/scheduler.hpp"

namespace weft::detail {

local_world::local_world(int nranks) {
  for (int r = 0; r < nranks; ++r) inboxes_.push_back(std::make_unique<inbox>(nranks));
}

local_world::~local_world() {
  for (auto& in : inboxes_)
    for (auto& r : in->from) delete r.load(std::memory_order_acquire);
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

pair_ring& local_world::ring(inbox& in, int source) {
  auto& slot = in.from[static_cast<std::size_t>(source)];
  pair_ring* r = slot.load(std::memory_order_acquire);
  if (r != nullptr) return *r;
  auto fresh = std::make_unique<pair_ring>(ring_capacity);
  if (slot.compare_exchange_strong(r, fresh.get(), std::memory_order_acq_rel)) return *fresh.release();
  return *r;  // another thread of the source rank installed one first
}

void local_transport::send(int dest, am_message&& m) {
  auto& in = *world_.inboxes_[static_cast<std::size_t>(dest)];
  if (!world_.ring(in, rank_).try_push(m)) {
    std::lock_guard lock(in.overflow_mutex);
    in.overflow.push_back(std::move(m));
  }
  in.pending.fetch_add(1, std::memory_order_release);
  in.sched->wake_one();  // an idle worker of the destination picks it up
}

bool local_transport::progress() {
  auto& in = *world_.inboxes_[static_cast<std::size_t>(rank_)];
  if (in.pending.load(std::memory_order_acquire) == 0) return false;
  if (in.consuming.exchange(true, std::memory_order_acquire)) return false;
  std::size_t n = 0;
  auto deliver = [&in](am_message&& m) { in.dispatch(in.ctx, std::move(m)); };
  for (auto& slot : in.from)
    if (pair_ring* r = slot.load(std::memory_order_acquire)) n += r->drain(deliver);
  {
    std::lock_guard lock(in.overflow_mutex);
    spilled_.swap(in.overflow);
  }
  for (auto& m : spilled_) deliver(std::move(m));
  n += spilled_.size();
  spilled_.clear();
  // A producer bumps `pending` after publishing, so this may briefly take
  // it below zero (it wraps); that only makes pollers look once more.
  in.pending.fetch_sub(n, std::memory_order_acq_rel);
  in.consuming.store(false, std::memory_order_release);
  return n != 0;
}

}  // namespace weft::detail
