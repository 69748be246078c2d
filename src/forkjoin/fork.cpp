// Forks and joins: the checks at both, pushing onto the calling worker's
// deque, taking an unstolen task back, waiting for a stolen one, and the
// cache's release and acquire at those points (docs/FORKJOIN.md).
#include <cstring>

#include "forkjoin/outcome_board.hpp"
#include "forkjoin/state.hpp"
#include "sched/scheduler.hpp"
#include "trace/recorder.hpp"
#include "weft/checkout.hpp"

namespace weft::detail::fj {

namespace {

/// The calling worker's deque, if it works for a rank whose deques exist.
steal_deque* own_deque(fj_rank*& rank_out) noexcept {
  worker* w = current_worker();
  if (w == nullptr || w->sched->comm == nullptr) return nullptr;
  fj_rank& me = state_of(*static_cast<rank_comm*>(w->sched->comm));
  if (!me.ready.load(std::memory_order_acquire)) return nullptr;
  rank_out = &me;
  return &me.mine->deque(w->index);
}

void check_no_checkout(const char* what) {
  if (const int held = held_by_current_task(); held != 0)
    fail(current_comm().rank, std::string(what) + " while the task holds " + std::to_string(held) +
                                  " checkout(s): check them in before forking or joining (a forked task may run on "
                                  "another rank, and the checked-out bytes are not written back until check-in)");
}

}  // namespace

void before_fork(const void* payload, std::size_t size, const char* what) {
  if (options().checks) {
    check_no_checkout(what);
    const char* lo;
    const char* hi;
    if (current_stack(lo, hi)) {
      // A word of the captures that points into the forking task's stack
      // is almost surely a captured address of a local ([&]).
      const auto* bytes = static_cast<const std::byte*>(payload);
      for (std::size_t at = 0; at + sizeof(std::uintptr_t) <= size; at += alignof(std::uintptr_t)) {
        std::uintptr_t word;
        std::memcpy(&word, bytes + at, sizeof word);
        if (word >= reinterpret_cast<std::uintptr_t>(lo) && word < reinterpret_cast<std::uintptr_t>(hi))
          fail(current_comm().rank,
               std::string(what) + ": the forked function captured the address of a local variable (byte " +
                   std::to_string(at) +
                   " of its captures points into the forking task's stack); the task may run on another rank. "
                   "Capture values, weft::global_ptr or weft::global_span instead of [&]");
      }
    }
  }
  // What this task wrote through checkouts must be in the owners' heaps
  // before a thief on another rank can run the forked task.
  detail::pgas::task_boundary_release();
}

bool push(const task_record* r, const void* payload, std::uint32_t size, cell_base* c) noexcept {
  fj_rank* me = nullptr;
  steal_deque* d = own_deque(me);
  if (d == nullptr) return false;
  const entry_header h{code_of(r), reinterpret_cast<std::uintptr_t>(c), me->rank, size,
                       me->root.load(std::memory_order_acquire)};
  if (!d->push(h, payload)) return false;
  me->comm.sched->wake_one();  // a sleeping sibling may take it
  return true;
}

namespace {
/// Pops the calling worker's newest task into `out` (if set) when it is
/// the one for `c`.
bool pop_newest_if(const cell_base* c, task_entry* out) noexcept {
  fj_rank* me = nullptr;
  steal_deque* d = own_deque(me);
  if (d == nullptr || d->newest_cell() != reinterpret_cast<std::uintptr_t>(c)) return false;
  return d->pop(out);
}
}  // namespace

bool pop_if(const cell_base* c) noexcept { return pop_newest_if(c, nullptr); }

void take_back_and_run(const cell_base& c) noexcept {
  task_entry e;
  if (!pop_newest_if(&c, &e)) return;
  task_base* t = make_stolen_task(e);
  const trace::label joiner = trace::interval_end();  // the forked task gets an interval of its own
  trace::interval_begin();
  t->run(t);  // completes c, frees t
  trace::interval_end();
  trace::interval_begin(joiner);
}

void join(cell_base& c, const char* what) {
  if (options().checks) check_no_checkout(what);
  if (!c.done.is_set()) {
    // With forked tasks queued on this worker, suspend at once: the worker
    // has work, and polling first only delays it.
    fj_rank* me = nullptr;
    const steal_deque* d = own_deque(me);
    wait_for(c.done, &c, d == nullptr || d->looks_empty());
  }
  if (c.ran_on != current_comm().rank) detail::pgas::task_boundary_acquire();
}

std::uint64_t adopt_future_cell(cell_base* c, void (*destroy)(cell_base*)) noexcept {
  fj_rank& me = current_rank();
  std::lock_guard g(me.cells_mutex);
  me.cells.emplace_back(c, destroy);
  // Slots only inside a root_exec: its end gives them back.
  return me.root.load(std::memory_order_relaxed) != 0 ? me.board.take(me, *c) : no_outcome_slot;
}

void finish_here(cell_base& c) noexcept { mark_done(c, current_comm().rank); }

}  // namespace weft::detail::fj
