// Where an idle worker looks for forked tasks once its rank's scheduler has
// none (the scheduler's foreign_work hook): its own deque (tasks its
// suspended tasks left), its siblings' deques, then — inside a root_exec —
// a random rank of its node through shared memory, else a random rank of
// another node: by the transport's one-sided operations where it has them
// (remote_steal.cpp), else by message (one request at a time). It takes
// only tasks of the root its rank is inside (docs/FORKJOIN.md, "Roots back
// to back").
#include <atomic>

#include "forkjoin/random_pick.hpp"
#include "forkjoin/remote_steal.hpp"
#include "forkjoin/state.hpp"
#include "sched/scheduler.hpp"
#include "trace/recorder.hpp"
#include "weft/pgas.hpp"

namespace weft::detail::fj {

namespace {

/// Tries every deque of `set`, starting at a random one, for a task of
/// `root`. Returns the worker it took one from, or -1.
int steal_from(deque_set& set, task_entry& out, std::uint64_t root) noexcept {
  const int n = set.workers.load(std::memory_order_acquire);
  if (n <= 0) return -1;
  const int start = static_cast<int>(next_random() % static_cast<std::uint64_t>(n));
  for (int k = 0; k < n; ++k)
    if (set.deque((start + k) % n).steal(out, root)) return (start + k) % n;
  return -1;
}

bool looks_empty(deque_set& set) noexcept {
  const int n = set.workers.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (!set.deque(i).looks_empty()) return false;
  return true;
}

task_base* steal_on_node(fj_rank& me, std::uint64_t root) noexcept {
  const int victim = pick(me.node_victims);
  auto* set = reinterpret_cast<deque_set*>(detail::pgas::address_of(victim, me.deques_offset, false));
  task_entry e;
  // Attempts on a victim with something to take are timed, of the others
  // (nearly all: an empty deque is one look) every 16th: reading the clock
  // twice per attempt was a tenth of an idle thief's time.
  thread_local unsigned attempts = 0;
  const bool timed = !looks_empty(*set) || (++attempts & 15) == 0;
  const std::int64_t t0 = timed ? now_ns() : 0;
  const int victim_worker = steal_from(*set, e, root);
  const bool ok = victim_worker >= 0;
  const auto spent = timed ? static_cast<std::uint64_t>(now_ns() - t0) : 0;
  counters& c = me.stats;
  (ok ? c.from_node : c.failed).fetch_add(1, std::memory_order_relaxed);
  if (timed) {
    (ok ? c.node_timed : c.failed_timed).fetch_add(1, std::memory_order_relaxed);
    (ok ? c.node_ns : c.failed_ns).fetch_add(spent, std::memory_order_relaxed);
  }
  if (ok) trace::stolen_from(victim, victim_worker);
  return ok ? make_stolen_task(e) : nullptr;
}

void ask_remote(fj_rank& me, std::uint64_t root) {
  if (me.request_out.exchange(true, std::memory_order_acq_rel)) return;
  me.request_sent_ns.store(now_ns(), std::memory_order_relaxed);
  send_am(me.comm, pick(me.remote_victims), forkjoin_messages,
          wire_header{wire_kind::steal_request, 0, me.rank, root, 0});
  if (worker* w = current_worker()) publish_sends(*w);  // the idle loop has no other publishing point
}

task_base* find_forked(scheduler& s, worker& w) noexcept {
  if (s.comm == nullptr) return nullptr;
  fj_rank& me = state_of(*static_cast<rank_comm*>(s.comm));
  if (!me.ready.load(std::memory_order_acquire)) return nullptr;
  task_entry e;
  if (me.mine->deque(w.index).pop(&e)) return make_stolen_task(e);
  const std::uint64_t root = me.root.load(std::memory_order_acquire);
  const int n = me.mine->workers.load(std::memory_order_relaxed);
  for (int k = 1; k < n; ++k)
    if (me.mine->deque((w.index + k) % n).steal(e, root)) {
      me.stats.from_siblings.fetch_add(1, std::memory_order_relaxed);
      return make_stolen_task(e);
    }
  if (root == 0) return nullptr;  // between roots: other ranks' tasks are not ours
  if (!me.node_victims.empty())
    if (task_base* t = steal_on_node(me, root)) return t;
  if (me.remote_victims.empty()) return nullptr;
  if (steals_one_sided(me)) return steal_one_sided(me, root);
  ask_remote(me, root);
  return nullptr;
}

/// Inside a root_exec an idle rank keeps trying other ranks' deques (it
/// is not woken when they fill).
bool stealing(scheduler& s) noexcept {
  return s.comm != nullptr && state_of(*static_cast<rank_comm*>(s.comm)).root.load(std::memory_order_acquire) != 0;
}

const bool hooked = [] {
  foreign_work = &find_forked;
  foreign_work_expected = &stealing;
  return true;
}();

}  // namespace

bool steal_for_remote(fj_rank& me, task_entry& out, std::uint64_t root) noexcept {
  return me.ready.load(std::memory_order_acquire) && steal_from(*me.mine, out, root) >= 0;
}

}  // namespace weft::detail::fj
