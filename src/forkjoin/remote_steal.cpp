// Steals from ranks of other nodes the way Itoyori does: by the
// transport's one-sided operations on the victim's deque in its symmetric
// heap, with no help from the victim's CPU (a victim busy in a long task,
// with no progress thread, is stolen from all the same). It is the THE
// protocol of steal_deque.hpp, step by step over the network:
//
//   1. look: one get of top and bottom; an empty deque ends the attempt
//      without taking the lock (most attempts of an idle thief find none);
//   2. lock: compare-and-swap of the deque's lock word, free -> this
//      thief's mark (held by someone: give up, try later);
//   3. claim, then look: fetch-and-add 1 on top, then read bottom by
//      fetch-and-add 0 (the pair with the owner's pop: the owner stores
//      bottom then loads top, so one of the two sees the other); nothing
//      left: swap top back;
//   4. get the entry (256 bytes, self-contained: packet, the task record's
//      offset from the anchor, forking rank, cell, root); of a root other
//      than the thief's: swap top back;
//   5. unlock: swap the lock word back to free.
//
// The owner and thieves of its node update the same words with the CPU's
// atomics, so the transport's atomics must be atomic with them and complete
// without the target's CPU: true of the smp backend's operations (CPU
// atomics on the target's word) and of RDMA hardware atomics on coherent
// memory, not of MPI RMA as MPICH 4.0 carries it out on this host (by the
// target's progress; docs/FORKJOIN.md). A remote thief changes top and the
// lock only by the transport's atomics and reads bottom after its claim by
// one; the look reads top and bottom, and the entry is read, by gets.
//
// Idle thieves keep the network quiet: one random victim and one of its
// deques per attempt, at most `limit` attempts of a rank under way at a
// time, and after a failed attempt the rank waits, doubling the wait while
// attempts keep failing (a success ends it). The wait is counted in the
// failed attempt's own time: from one attempt's length up to 4 of them,
// and never over 16 µs. So a thief that keeps failing spends at most
// about a fifth of its time, and of the network's, in attempts, whatever
// an attempt costs: on RDMA (a few µs) the waits reach 12-16 µs, between
// ranks of one process (0.1 µs) they stay under half a µs, where a fixed
// 1-16 µs made a task pushed during a wait sit idle for much of a short
// task.
#include "forkjoin/remote_steal.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "forkjoin/options.hpp"
#include "forkjoin/random_pick.hpp"
#include "pgas/one_sided_heap.hpp"
#include "rma/racing_reads.hpp"
#include "trace/recorder.hpp"

namespace weft::detail::fj {

namespace {

constexpr std::int64_t backoff_most_ns = 16000;
constexpr std::int64_t backoff_attempts = 4;    // the longest wait, in failed attempts' lengths
constexpr std::int64_t shortest_attempt_ns = 100;

struct one_sided_thief {
  explicit one_sided_thief(rank_comm&) {}
  std::once_flag set_up;
  bool on = false;
  int limit = 1;                    // attempts of this rank under way at a time
  one_sided_ops* ops = nullptr;      // this rank's
  std::uint64_t key = 0;             // every rank's heap
  std::unique_ptr<std::atomic<int>[]> workers;  // by rank: its deques, 0 until the first attempt on it
  std::atomic<int> under_way{0};
  std::atomic<std::int64_t> not_before_ns{0};  // backing off until then
  std::atomic<std::uint32_t> failures{0};      // failed attempts since the last success
};


one_sided_thief& thief_of(fj_rank& me) {
  one_sided_thief& s = layer_state<one_sided_thief>(me.comm);
  std::call_once(s.set_up, [&] {
    // This rank's operations; the heaps of all ranks share one key. None
    // (the transport has no one-sided operations, or the pgas layer does
    // not use them: WEFT_PGAS_ONE_SIDED=0): steals by message.
    const ::weft::pgas::detail::one_sided_heap h = ::weft::pgas::detail::heap_one_sided(me.rank);
    s.ops = h.ops;
    s.key = h.key;
    s.workers = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(me.comm.nranks));
    s.on = h.ops != nullptr && !me.remote_victims.empty() && forkjoin_options().steal_rdma;
    s.limit = std::max(1, me.mine->workers.load(std::memory_order_relaxed) / 2);
  });
  return s;
}

}  // namespace

attempt_result steal_entry_one_sided(one_sided_ops& ops, int victim, std::uint64_t key, std::size_t at,
                                     std::uint64_t mark, std::uint64_t root, task_entry& out) {
  constexpr std::size_t top = steal_deque::top_offset(), bottom = steal_deque::bottom_offset(),
                        lock = steal_deque::lock_offset();
  static_assert(top % 8 == 0 && bottom % 8 == 0 && lock % 8 == 0 && bottom > top);
  constexpr std::size_t bottom_word = (bottom - top) / 8;
  std::int64_t words[bottom_word + 1];
  {
    // A look, racing by design with the owner's and other thieves' updates
    // (a stale answer costs one wasted or one skipped attempt).
    rma::detail::racing_reads look;
    ops.get(victim, key, at + top, words, sizeof words);
    ops.flush(victim);
  }
  if (words[0] >= words[bottom_word]) return attempt_result::empty;

  if (ops.compare_swap(victim, key, at + lock, steal_deque::unlocked, mark) != steal_deque::unlocked)
    return attempt_result::busy;
  const auto t = static_cast<std::int64_t>(ops.fetch_add(victim, key, at + top, 1));
  // Bottom by an atomic (adding 0), not a get: it reads the owner's latest
  // store of bottom, which follows its write of the slot, so the slot read
  // next is complete.
  const auto b = static_cast<std::int64_t>(ops.fetch_add(victim, key, at + bottom, 0));
  attempt_result r = attempt_result::taken;
  if (t >= b) {
    r = attempt_result::empty;  // the owner popped it meanwhile
  } else {
    ops.get(victim, key, at + steal_deque::slot_offset(t), &out, sizeof out);
    ops.flush(victim);
    if (out.h.root != root) r = attempt_result::other_root;
  }
  // Before unlocking: the owner reuses a slot only once top has passed it,
  // and waits for the lock when it races for the last task.
  if (r != attempt_result::taken) ops.swap(victim, key, at + top, static_cast<std::uint64_t>(t));
  ops.swap(victim, key, at + lock, steal_deque::unlocked);
  return r;
}

namespace {

/// The number of deques of `victim` (its deque_set's header), once.
int workers_of(one_sided_thief& s, const fj_rank& me, int victim) {
  std::atomic<int>& known = s.workers[static_cast<std::size_t>(victim)];
  int n = known.load(std::memory_order_relaxed);
  if (n == 0) {
    // Every rank made its set before the barrier that ends make_deques.
    s.ops->get(victim, s.key, me.deques_offset + offsetof(deque_set, workers), &n, sizeof n);
    s.ops->flush(victim);
    known.store(n, std::memory_order_relaxed);
  }
  return n;
}

void back_off(one_sided_thief& s, bool failed, std::int64_t attempt_ns) noexcept {
  if (!failed) {
    s.failures.store(0, std::memory_order_relaxed);
    s.not_before_ns.store(0, std::memory_order_relaxed);
    return;
  }
  const std::uint32_t f = s.failures.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t attempt = std::clamp(attempt_ns, shortest_attempt_ns, backoff_most_ns);
  const std::int64_t most = std::min(backoff_most_ns, attempt * backoff_attempts);
  const std::int64_t wait = std::min(most, attempt << std::min<std::uint32_t>(f, 8));
  // Between half the wait and all of it: thieves that failed together do
  // not come back together.
  const std::int64_t jitter = static_cast<std::int64_t>(next_random() % static_cast<std::uint64_t>(wait / 2 + 1));
  s.not_before_ns.store(now_ns() + wait - jitter, std::memory_order_relaxed);
}

}  // namespace

bool steals_one_sided(fj_rank& me) noexcept { return thief_of(me).on; }

task_base* steal_one_sided(fj_rank& me, std::uint64_t root) noexcept {
  one_sided_thief& s = thief_of(me);
  const std::int64_t t0 = now_ns();
  if (t0 < s.not_before_ns.load(std::memory_order_relaxed)) return nullptr;
  if (s.under_way.fetch_add(1, std::memory_order_acquire) >= s.limit) {
    s.under_way.fetch_sub(1, std::memory_order_release);
    return nullptr;
  }
  const int victim = pick(me.remote_victims);
  const int n = workers_of(s, me, victim);
  const int d = n > 0 ? static_cast<int>(next_random() % static_cast<std::uint64_t>(n)) : 0;
  task_entry e;
  // A mark no thief of this process writes (they write locked_here).
  const std::uint64_t mark = steal_deque::locked_here + 1 + static_cast<std::uint64_t>(me.rank);
  const attempt_result r =
      n > 0 ? steal_entry_one_sided(*s.ops, victim, s.key,
                      me.deques_offset + deque_set::header_bytes + sizeof(steal_deque) * static_cast<std::size_t>(d),
                      mark, root, e)
            : attempt_result::empty;
  const auto spent = static_cast<std::uint64_t>(now_ns() - t0);
  s.under_way.fetch_sub(1, std::memory_order_release);
  const bool ok = r == attempt_result::taken;
  back_off(s, !ok, static_cast<std::int64_t>(spent));
  counters& c = me.stats;
  if (ok) {
    c.from_remote.fetch_add(1, std::memory_order_relaxed);
    c.remote_ns.fetch_add(spent, std::memory_order_relaxed);
    trace::stolen_from(victim, d);
    return make_stolen_task(e);
  }
  c.failed.fetch_add(1, std::memory_order_relaxed);
  c.failed_timed.fetch_add(1, std::memory_order_relaxed);
  c.failed_ns.fetch_add(spent, std::memory_order_relaxed);
  return nullptr;
}

}  // namespace weft::detail::fj
