// One rank's worker pool: threads pinned to cores, each running fibers that
// pull tasks from its own work-stealing deque, the rank's injection queue
// (work from non-worker threads), and other workers' deques.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sched/cpu_relax.hpp"
#include "sched/fence.hpp"
#include "sched/fiber.hpp"
#include "sched/sleep_slot.hpp"
#include "sched/ws_deque.hpp"
#include "weft/detail/task.hpp"

namespace weft::detail {

class core_claim;

struct sched_options {
  int threads = 1;
  // Worker i is pinned to core first_core + i of `cores` (which outlives the
  // workers); null: the workers run unpinned, inside the process's mask.
  const core_claim* cores = nullptr;
  int first_core = 0;
  std::size_t stack_size = 256 * 1024;   // per fiber, plus a guard page
  int spin_rounds = 20000;               // idle: polls before yielding the CPU
  int yield_rounds = 64;                 // idle: sched_yield rounds before sleeping
  int wait_spin_rounds = 64;             // get() with nothing else queued: polls before suspending
  // With a poll hook: how long an idle worker sleeps before polling again
  // (a message whose wake-up it missed is noticed then).
  long idle_nap_ns = 200000;
  // Spinning workers that poll communication skip the pause instruction:
  // the poll itself takes long enough (an MPI progress call), and the
  // pause (~140 cycles on recent x86) delayed noticing a message. On the
  // smp backend a poll is a few loads of ring slots the sender is writing,
  // and polling those without a pause slowed the sender down.
  bool poll_replaces_pause = false;
};

class scheduler;

/// Counter with one writer (its worker) and many readers: a plain store,
/// no read-modify-write on the hot path.
struct owned_counter {
  std::atomic<std::uint64_t> v{0};
  void inc() noexcept { v.store(v.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
  std::uint64_t get() const noexcept { return v.load(std::memory_order_acquire); }
};

/// A locked FIFO of tasks whose emptiness is readable without the lock (the
/// cheap check made on every scheduling decision): the rank's injection
/// queue, fed by threads that are not its workers.
class task_queue {
 public:
  void push(task_base* t) noexcept {
    std::lock_guard lock(mutex_);
    tasks_.push_back(t);
    size_.fetch_add(1, std::memory_order_release);
  }
  task_base* take() noexcept {
    if (empty()) return nullptr;
    std::lock_guard lock(mutex_);
    if (tasks_.empty()) return nullptr;
    task_base* t = tasks_.front();
    tasks_.pop_front();
    size_.fetch_sub(1, std::memory_order_relaxed);
    return t;
  }
  bool empty() const noexcept { return size_.load(std::memory_order_acquire) == 0; }

 private:
  std::mutex mutex_;
  std::deque<task_base*> tasks_;
  std::atomic<std::size_t> size_{0};
};

/// Tasks placed on one worker by its siblings: a lock-free list that any
/// thread pushes onto with one CAS and a taker empties with one exchange
/// (no lock line bouncing between the two cores of a hand-over; the task's
/// own line carries the link; see scheduler::take_placed).
class placed_list {
 public:
  void push(task_base* t) noexcept {
    task_base* h = head_.load(std::memory_order_relaxed);
    do {
      t->next = h;
    } while (!head_.compare_exchange_weak(h, t, std::memory_order_release, std::memory_order_relaxed));
  }
  /// Everything queued, newest first (nullptr if empty).
  task_base* take_all() noexcept {
    if (empty()) return nullptr;
    return head_.exchange(nullptr, std::memory_order_acquire);
  }
  bool empty() const noexcept { return head_.load(std::memory_order_acquire) == nullptr; }

 private:
  alignas(64) std::atomic<task_base*> head_{nullptr};
};

struct worker {
  worker(scheduler* s, int i, std::size_t stack_size) : sched(s), index(i), pool(stack_size) {}
  scheduler* sched;
  int index;
  ws_deque<task_base*> deque;
  fiber_pool pool;
  fiber* current = nullptr;        // fiber running on this worker now
  fiber* thread_fiber = nullptr;   // the OS thread's own stack, to exit through
  std::deque<task_base*> yielded;  // this_task::yield() resumptions, FIFO
  // Tasks placed on this worker by its siblings (weft::on_thread): taken
  // after its own deque; idle siblings take them when nothing else is left.
  placed_list inbox;
  // Cleanups deferred by tasks that finished here (defer_cleanup), newest
  // first, linked through task_base::next: run when nothing else is local.
  task_base* deferred = nullptr;
  int n_deferred = 0;
  // Nodes placed here, held while a dataflow task publishes its result
  // (hold_own_placed), newest first.
  bool holding_placed = false;
  task_base* held_placed = nullptr;
  std::uint64_t rng = 0;
  std::uint32_t polls = 0;  // find_work calls, to poll communication every 64th
  bool dozing = false;      // its last sleep ran out unwoken, with nothing found (see idle_wait)
  std::thread thread;
  // Work items made runnable here / segments of work that ended here; the
  // rank is quiescent when the sums agree (see scheduler::quiescent).
  alignas(64) owned_counter spawned;
  owned_counter finished;
  // Active messages this worker sent for its rank (the comm layer's share of
  // the quiescence count: a plain store per message, no shared atomic).
  owned_counter messages_sent;
  // Set by the transport while messages this worker sent are not visible
  // to their destinations yet (cleared by publish_sends).
  bool unpublished_sends = false;
};

/// The calling thread's worker, or nullptr. Not inlined: a fiber may move
/// between threads, so the TLS address must be recomputed on every call.
/// Pushes `t` onto the calling worker's deque when it belongs to `target`,
/// without waking an idle sibling (true); the caller wakes one once for a
/// whole batch. Otherwise hands it over like spawn_to (false).
bool spawn_quietly(scheduler* target, task_base* t) noexcept;
/// spawn_to's path for a task started off the target's workers.
void spawn_elsewhere(void* target, task_base* t) noexcept;
worker* current_worker() noexcept;

class scheduler {
 public:
  scheduler(int rank, const sched_options& opts);
  ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  void start();
  /// Waits until no task is queued or running, then stops the workers.
  void stop();

  /// Queues work from a thread that is not one of this rank's workers.
  void inject(task_base* t) noexcept;
  /// Queues `t` on worker `index`'s inbox (called by a sibling worker).
  void post_to_worker(int index, task_base* t) noexcept { workers_[static_cast<std::size_t>(index)]->inbox.push(t); }
  /// Wakes a sleeping worker if there is one (after new work appeared).
  /// Inline: every spawn and every message calls it, and nobody sleeps in
  /// the common case (a compiler barrier and one load).
  void wake_one() noexcept {
    // Pairs with the heavy_fence in idle_wait: either this load sees the
    // sleeper, or the sleeper's last check sees what the caller published.
    light_fence();
    if (slot_->sleepers.load(std::memory_order_relaxed) > 0) [[unlikely]]
      wake_sleeper();
  }
  void wake_all() noexcept;
  /// Idle workers sleep in `s` instead of the scheduler's own slot: memory
  /// other processes map (`shared`), whose writers wake them there
  /// (wake_shared_sleeper). Call before start(); `s` outlives the workers.
  void sleep_in(sleep_slot& s, bool shared) noexcept {
    slot_ = &s;
    slot_shared_ = shared;
  }

  /// No task queued or running on this rank (external threads aside).
  bool quiescent() const noexcept;
  /// Sum of the workers' messages_sent counters.
  std::uint64_t messages_sent_by_workers() const noexcept;
  /// Blocks the calling (non-worker) thread until quiescent().
  void wait_quiescent() const noexcept;

  /// The rank's communication context (set by the runtime; opaque here).
  void* comm = nullptr;

  /// Polled by idle workers, by workers about to resume yielded tasks, and
  /// every 64th scheduling decision of a busy worker (the comm layer's
  /// progress in worker mode). Returns whether it did anything. Set before
  /// start().
  std::function<bool()> idle_poll;

  /// Makes visible what worker `index` sent but left unpublished (the smp
  /// backend publishes in batches): called through publish_sends() before
  /// the worker switches tasks, waits or goes idle. Set before start().
  void (*publish)(void* ctx, int index) noexcept = nullptr;
  /// The same, even where publish would let the messages wait to leave
  /// with the next ones (the calling worker has other tasks ready): see
  /// publish_sends_now(). Null: publish is never lazy.
  void (*publish_now)(void* ctx, int index) noexcept = nullptr;
  void* publish_ctx = nullptr;

  int rank() const noexcept { return rank_; }
  int num_workers() const noexcept { return static_cast<int>(workers_.size()); }
  const sched_options& options() const noexcept { return opts_; }

  // -- used by the worker loop ------------------------------------------
  task_base* find_work(worker& w) noexcept;
  bool idle_wait(worker& w) noexcept;  // true: stop and exit
  /// Work `w` takes before its yielded tasks and before stealing: its own
  /// deque, then tasks placed on it, then the rank's injection queue.
  bool has_local_work(const worker& w) const noexcept;
  task_base* take_local(worker& w) noexcept;
  /// The oldest task placed on `from`, taken by worker `w` (its owner or an
  /// idle sibling); the rest of those placed tasks go onto w's deque.
  task_base* take_placed(worker& w, worker& from) noexcept;

 private:
  [[gnu::cold]] void wake_sleeper() noexcept;
  void worker_main(worker& w);
  bool has_visible_work() const noexcept;

  int rank_;
  sched_options opts_;
  std::vector<std::unique_ptr<worker>> workers_;
  task_queue injected_;
  std::atomic<std::uint64_t> injected_spawned_{0};
  std::atomic<int> injectors_{0};  // external threads inside inject(): stop() waits for them
  sleep_slot own_slot_;
  sleep_slot* slot_ = &own_slot_;  // where idle workers sleep (see sleep_in)
  bool slot_shared_ = false;
  std::atomic<bool> stopping_{false};
};

/// Publishes what `w` sent and left unpublished: at every scheduling point
/// (a task ends, yields or waits) and when progress returns, so a message
/// waits at most until its sending task gives up the worker.
inline void publish_sends(worker& w) noexcept {
  if (!w.unpublished_sends) return;
  w.unpublished_sends = false;
  w.sched->publish(w.sched->publish_ctx, w.index);
}

/// Sends what this rank's tasks have sent so far now, even with other tasks
/// ready (the mpi transport then lets messages wait to leave together with
/// the next ones): for a task about to hold its worker long, such as a
/// device kernel, so that a reply another rank waits for does not wait for
/// the kernel to end.
inline void publish_sends_now() noexcept {
  worker* w = current_worker();
  if (w == nullptr) return;
  scheduler& s = *w->sched;
  w->unpublished_sends = false;
  if (s.publish_now != nullptr) s.publish_now(s.publish_ctx, w->index);
  else if (s.publish != nullptr) s.publish(s.publish_ctx, w->index);
}

/// The rank a non-worker thread acts for (set by the runtime for the main
/// thread and helper threads); nullptr if none.
scheduler*& home_scheduler() noexcept;

/// Work from outside the scheduler's own queues, asked for by an idle worker
/// after its rank's deques came up empty (forkjoin: tasks stolen from the
/// deques of other ranks). Returns a task for `w` to run, or nullptr. Set at
/// load time by the layer that provides it; null when none does.
extern task_base* (*foreign_work)(scheduler& s, worker& w) noexcept;
/// Whether that layer wants idle workers of `s` to keep asking it: they
/// then nap (idle_nap_ns) instead of sleeping until woken. Null: never.
extern bool (*foreign_work_expected)(scheduler& s) noexcept;

/// Hook the runtime installs to end the whole job (all ranks) on a fatal error.
extern void (*fatal_handler)(const char* message) noexcept;

}  // namespace weft::detail
