// Internal: the unit of work the scheduler runs, and the calls the public
// templates in <weft/sched.hpp> make into the compiled runtime.
#pragma once
#include <cstdint>

namespace weft::detail {

/// A schedulable item. `run` executes it and owns its cleanup. `tag`
/// names whoever may run it inline while waiting for it (a future's shared
/// state, a task_group), so a waiter takes back only its own work and never
/// falls into running unrelated tasks on its stack.
struct task_base {
  void (*run)(task_base*) = nullptr;
  const void* tag = nullptr;
  task_base* next = nullptr;  // link while queued in a worker's inbox
};

/// Queue `t` on the calling worker (LIFO, stealable) or, from a thread that
/// is not a worker, on the current rank's injection queue.
void spawn(task_base* t) noexcept;

/// The rank scheduler the calling thread works for (a worker's own, or the
/// home rank of a thread the runtime knows), as an opaque handle; nullptr if
/// none.
void* current_scheduler() noexcept;

/// Queues `t` on scheduler `sched`: locally if the caller is one of its
/// workers, else through its injection queue. Wake-ups (a promise set by a
/// foreign thread, a message handler on another rank) use this so work stays
/// on the rank that created it.
void spawn_to(void* sched, task_base* t) noexcept;

/// Like spawn_to, but asks for worker `index` (modulo the rank's worker
/// count) of the calling worker's rank: queued in that worker's inbox, where
/// idle siblings may still take it. From any other thread: spawn_to.
void spawn_on_thread(void* sched, int index, task_base* t) noexcept;

/// Around a dataflow task publishing its result: nodes that this makes
/// ready and that are placed on the calling worker itself are held back
/// (hold_own_placed returns true) until release_own_placed queues them, so
/// the nodes placed on sibling workers are queued first. Otherwise an idle
/// sibling polling for work could find this worker's next node before its
/// own and take it, and both would then run the other's point.
/// begin_holding_own_placed returns the holder to pass to release_own_placed
/// (nullptr off the workers: nothing is held then).
void* begin_holding_own_placed() noexcept;
bool hold_own_placed(void* sched, int index, task_base* t) noexcept;
void release_own_placed(void* holder) noexcept;
/// Holds them for its lifetime, which must not span a suspension (the
/// holder is the worker it began on).
struct own_placed_hold {
  void* holder = begin_holding_own_placed();
  own_placed_hold() = default;
  own_placed_hold(const own_placed_hold&) = delete;
  own_placed_hold& operator=(const own_placed_hold&) = delete;
  ~own_placed_hold() { release_own_placed(holder); }
};

/// For a task finishing on a worker: run `t` (the task's own object, its
/// `run` now pointing at its cleanup) once the calling worker finds nothing
/// else to do, so the cleanup (dropping references other cores wrote) is not
/// on the path to the worker's next task. Counts as outstanding work until it
/// ran. False when not on a worker or the worker holds enough deferred
/// cleanups already: the caller then cleans up at once.
bool defer_cleanup(task_base* t) noexcept;

/// If the newest task of the calling worker carries `tag` and the fiber has
/// stack to spare, pop and run it here. Returns whether it ran one.
bool try_run_inline(const void* tag) noexcept;

/// True on a worker thread of some rank.
bool on_worker() noexcept;

/// A count the layers above keep for the code running now (pgas: the
/// checkouts it holds), kept on the running fiber, so it follows a task that
/// moves between workers; a thread's own outside the workers. Tasks run one
/// after another on a fiber, each leaving it as it found it.
int& held_by_current_task() noexcept;

/// The stack the caller runs on, [lo, hi): a worker's fiber stack (false
/// off the workers, where it is not known).
bool current_stack(const char*& lo, const char*& hi) noexcept;

/// Reports an exception that escaped a detached task and ends the job.
[[noreturn]] void fatal_uncaught(const char* where) noexcept;

}  // namespace weft::detail
