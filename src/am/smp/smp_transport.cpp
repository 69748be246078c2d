#include "am/smp/smp_transport.hpp"

#include <algorithm>
#include <bit>

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

smp_world::smp_world(int nranks, int threads, int node_size)
    : threads_(threads),
      node_size_(node_size),
      returns_(std::make_unique<padded_channel[]>(static_cast<std::size_t>(nranks) * static_cast<std::size_t>(threads))),
      producers_(std::make_unique<producer[]>(static_cast<std::size_t>(nranks) * static_cast<std::size_t>(threads))) {
  const std::size_t producers = static_cast<std::size_t>(nranks) * static_cast<std::size_t>(threads);
  const std::size_t ring_bytes = ring_capacity * 64;
  const std::size_t affordable = dedicated_ring_budget / ring_bytes / static_cast<std::size_t>(nranks);
  ring_per_pair_ = affordable >= producers;
  // At least a few per rank, however many ranks: the pairs that keep a rank
  // busy (a halo's neighbours, a tree's children) get their own rings.
  const std::size_t dedicated = std::min(std::max<std::size_t>(affordable, 4), producers);
  const std::size_t shared = std::clamp<std::size_t>(std::bit_ceil(4 * static_cast<std::size_t>(nranks)), ring_capacity,
                                                     max_shared_capacity);
  for (int r = 0; r < nranks; ++r) inboxes_.push_back(std::make_unique<inbox>(nranks, threads, shared, dedicated));
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

pair_ring* smp_world::make_ring(int rank, int worker_index, int dest) {
  inbox& in = *inboxes_[static_cast<std::size_t>(dest)];
  if (!ring_per_pair_) {
    auto& counts = producer_of(rank, worker_index).shared_sends;
    if (counts.empty()) counts.resize(inboxes_.size());
    auto& sent = counts[static_cast<std::size_t>(dest)];
    if (sent < dedicated_after) {
      ++sent;
      return nullptr;
    }
  }
  long left = in.dedicated_left.load(std::memory_order_relaxed);
  do {
    if (left <= 0) return nullptr;  // this rank's budget went to others: shared ring for good
  } while (!in.dedicated_left.compare_exchange_weak(left, left - 1, std::memory_order_relaxed));
  auto* fresh = new pair_ring(ring_capacity, true);
  {
    std::lock_guard lock(in.rings_mutex);
    const std::size_t n = in.n_rings.load(std::memory_order_relaxed);
    in.rings[n] = fresh;
    in.n_rings.store(n + 1, std::memory_order_release);  // the consumer polls it from now on
  }
  // Only this worker writes its slot, so no other ring can have appeared.
  in.from[worker_slot(rank, worker_index)].store(fresh, std::memory_order_relaxed);
  return fresh;
}

// Inlined into send: one call less per message on the smp send path.
[[gnu::always_inline]] inline bool smp_transport::push(int dest, smp_world::inbox& in, am_message& m) {
  // A worker of this rank may have a ring of its own (no CAS); any other
  // thread, and a worker without one, shares the destination's
  // multi-producer ring.
  worker* w = current_worker();
  if (w != nullptr && w->sched == world_.inboxes_[static_cast<std::size_t>(rank_)]->sched) {
    if (m.has_out_of_line()) {  // nothing to do for small messages (most): keep their path short
      am_return_channel& home = world_.returns(rank_, w->index);
      home.free_all();  // what earlier messages left behind
      m.return_out_of_line_to(&home);
    }
    pair_ring* own = world_.ring(rank_, w->index, dest);
    if (own == nullptr) return in.shared.try_push(m);
    pair_ring& r = *own;
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
  return in.shared.try_push(m);
}

void smp_transport::send(int dest, am_message&& m) {
  auto& in = *world_.inboxes_[static_cast<std::size_t>(dest)];
  bool pushed = push(dest, in, m);
  // Backpressure: a task flooding a slower rank waits (running other tasks,
  // including its own rank's progress) for the ring to drain instead of
  // growing an unbounded overflow list. Spilling stays the fallback, so a
  // send never deadlocks: from inside progress, off-worker, or to itself.
  if (!pushed && delivering == 0 && dest != rank_ && current_worker() != nullptr)
    for (int i = 0; i < full_ring_yields && !pushed; ++i) {
      weft::this_task::yield();  // may resume on another worker: push picks its ring
      pushed = push(dest, in, m);
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
  if (in.spilled.load(std::memory_order_acquire) != 0 || in.shared.ready()) return true;
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
      // A progress thread frees what came back to every worker of the rank:
      // those workers never poll, and a payload's `keep` is its sender's
      // completion (an rma put completes when it is dropped), which a task
      // waiting for it would otherwise wait for until its worker sent
      // something large again. free_all takes the list with one exchange,
      // so the worker's own free_all may run at the same time.
      else if (w == nullptr)
        for (int i = 0; i < world_.threads_; ++i) world_.returns(rank_, i).free_all();
      return false;
    }
  }
  if (!in.consuming.try_lock()) return false;
  std::size_t n = 0;
  ++delivering;
  auto deliver = [&in](am_message&& m) { in.dispatch(in.ctx, std::move(m)); };
  const std::size_t n_rings = in.n_rings.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n_rings; ++i) n += in.rings[i]->drain(drain_batch, deliver, unpublished);
  n += in.shared.drain(drain_batch, deliver);
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
