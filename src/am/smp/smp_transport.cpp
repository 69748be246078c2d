#include "am/smp/smp_transport.hpp"

#include "sched/scheduler.hpp"
#include "weft/sched.hpp"

namespace weft::detail {

namespace {
// Set while this thread delivers messages: a handler that sends from inside
// progress must not suspend (it is not a task body).
thread_local int delivering = 0;
// How often a task whose destination ring is full yields before it spills.
constexpr int full_ring_yields = 1000;
// Messages taken from one ring per progress call. Bounded so that a flood
// stays in the ring, where it holds its sender back, instead of turning
// into an unbounded pile of handler tasks here: busy workers poll every 64
// scheduling decisions, so intake roughly matches what the rank executes.
constexpr std::size_t drain_batch = 64;
}  // namespace

smp_world::smp_world(int nranks, int threads)
    : threads_(threads),
      returns_(std::make_unique<padded_channel[]>(static_cast<std::size_t>(nranks) * static_cast<std::size_t>(threads))),
      producers_(std::make_unique<producer[]>(static_cast<std::size_t>(nranks) * static_cast<std::size_t>(threads))) {
  for (int r = 0; r < nranks; ++r) inboxes_.push_back(std::make_unique<inbox>(nranks, threads));
}

smp_world::~smp_world() {
  for (auto& in : inboxes_)
    for (std::size_t i = 0; i < in->n_rings.load(std::memory_order_acquire); ++i) delete in->rings[i];
}

void smp_world::attach(int r, scheduler* s, am_dispatch_fn fn, void* ctx) {
  inbox& in = *inboxes_[static_cast<std::size_t>(r)];
  in.sched = s;
  in.dispatch = fn;
  in.ctx = ctx;
}

std::unique_ptr<am_transport> smp_world::make_transport(int r) {
  return std::make_unique<smp_transport>(*this, r);
}

pair_ring& smp_world::make_ring(inbox& in, std::size_t index) {
  auto& slot = in.from[index];
  pair_ring* r = nullptr;
  // p = index % (threads + 1): 0 is the shared ring, 1 + w worker w's own.
  const bool one_writer = index % static_cast<std::size_t>(threads_ + 1) != 0;
  auto fresh = std::make_unique<pair_ring>(ring_capacity, one_writer);
  if (!slot.compare_exchange_strong(r, fresh.get(), std::memory_order_acq_rel))
    return *r;  // another thread of the source rank installed one first
  std::lock_guard lock(in.rings_mutex);
  const std::size_t n = in.n_rings.load(std::memory_order_relaxed);
  in.rings[n] = fresh.get();
  in.n_rings.store(n + 1, std::memory_order_release);  // the consumer polls it from now on
  return *fresh.release();
}

// Inlined into send: one call less per message on the smp send path.
[[gnu::always_inline]] inline bool smp_transport::push(smp_world::inbox& in, am_message& m) {
  // A worker of this rank has a ring of its own (no CAS); any other thread
  // shares the rank's multi-producer ring.
  const auto base = static_cast<std::size_t>(rank_) * static_cast<std::size_t>(world_.threads_ + 1);
  worker* w = current_worker();
  if (w != nullptr && w->sched == world_.inboxes_[static_cast<std::size_t>(rank_)]->sched) {
    if (m.has_out_of_line()) {  // nothing to do for small messages (most): keep their path short
      am_return_channel& home = world_.returns(rank_, w->index);
      home.free_all();  // what earlier messages left behind
      m.return_out_of_line_to(&home);
    }
    pair_ring& r = world_.ring(in, base + 1 + static_cast<std::size_t>(w->index));
    if (!r.try_write_single(m)) {
      r.publish();  // full: what it holds must become visible to drain
      return false;
    }
    if (!r.listed()) {  // the first unpublished message in this ring
      r.listed() = true;
      world_.producer_of(rank_, w->index).unpublished.push_back({&r, in.sched});
      w->unpublished_sends = true;
    } else if (r.unpublished() >= publish_batch) {
      r.publish();
    }
    return true;
  }
  return world_.ring(in, base).try_push(m);
}

void smp_transport::send(int dest, am_message&& m) {
  auto& in = *world_.inboxes_[static_cast<std::size_t>(dest)];
  bool pushed = push(in, m);
  // Backpressure: a task flooding a slower rank waits (running other tasks,
  // including its own rank's progress) for the ring to drain instead of
  // growing an unbounded overflow list. Spilling stays the fallback, so a
  // send never deadlocks: from inside progress, off-worker, or to itself.
  if (!pushed && delivering == 0 && dest != rank_ && current_worker() != nullptr)
    for (int i = 0; i < full_ring_yields && !pushed; ++i) {
      weft::this_task::yield();  // may resume on another worker: push picks its ring
      pushed = push(in, m);
    }
  if (!pushed) {
    std::lock_guard lock(in.overflow_mutex);
    in.overflow.push_back(std::move(m));
    in.spilled.fetch_add(1, std::memory_order_release);
  }
  in.sched->wake_one();  // an idle worker of the destination polls
}

void smp_transport::attach_publisher(scheduler& s) noexcept {
  s.publish = &publish_worker;
  s.publish_ctx = this;
}

void smp_transport::publish_worker(void* self, int index) noexcept {
  auto& t = *static_cast<smp_transport*>(self);
  auto& rings = t.world_.producer_of(t.rank_, index).unpublished;
  for (const auto& [ring, consumer] : rings) {
    ring->publish();
    ring->listed() = false;
    // send() woke the consumer before these messages were visible; a worker
    // of it that polled then and found nothing may have gone to sleep (up
    // to the idle nap, 20 ms when oversubscribed). Wake it now that they are.
    consumer->wake_one();
  }
  rings.clear();
}

bool smp_world::has_news(const inbox& in) noexcept {
  if (in.spilled.load(std::memory_order_acquire) != 0) return true;
  const std::size_t n = in.n_rings.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i)
    if (in.rings[i]->ready()) return true;
  return false;
}

bool smp_world::holds_unpublished(const inbox& in) noexcept {
  const std::size_t n = in.n_rings.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i)
    if (in.rings[i]->holds_unpublished()) return true;
  return false;
}

bool smp_transport::progress() {
  auto& in = *world_.inboxes_[static_cast<std::size_t>(rank_)];
  // A worker arrives here from a scheduling point, which published its
  // sends already; what handlers send below is published at the end.
  worker* w = current_worker();
  bool unpublished = false;
  if (!smp_world::has_news(in)) {
    // Now and then an idle poll also takes messages their producer wrote
    // and has not published: it may be running a long task that sent them
    // and has not reached a scheduling point since (pair_ring.hpp).
    unpublished = (in.quiet_polls.fetch_add(1, std::memory_order_relaxed) & (unpublished_check_interval - 1)) == 0 &&
                  smp_world::holds_unpublished(in);
    if (!unpublished) {
      // Idle: free what came back to this worker since its last large send
      // (a worker that stops sending does not keep its old payloads).
      if (w != nullptr && w->sched == in.sched) world_.returns(rank_, w->index).free_all();
      return false;
    }
  }
  if (!in.consuming.try_lock()) return false;
  std::size_t n = 0;
  ++delivering;
  auto deliver = [&in](am_message&& m) { in.dispatch(in.ctx, std::move(m)); };
  const std::size_t n_rings = in.n_rings.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n_rings; ++i) n += in.rings[i]->drain(drain_batch, deliver, unpublished);
  if (in.spilled.load(std::memory_order_acquire) != 0) {
    {
      std::lock_guard lock(in.overflow_mutex);
      spilled_.swap(in.overflow);
      in.spilled.store(0, std::memory_order_relaxed);
    }
    for (auto& m : spilled_) deliver(std::move(m));
    n += spilled_.size();
    spilled_.clear();
  }
  --delivering;
  in.consuming.unlock();
  if (w != nullptr && w->sched == in.sched) publish_sends(*w);  // what the handlers sent
  delivered(n);
  return n != 0;
}

}  // namespace weft::detail
