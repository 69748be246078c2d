#include "sched/scheduler.hpp"

#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <utility>

#include "sched/stack_fault.hpp"
#include "sched/topology.hpp"
#include "trace/recorder.hpp"
#include "weft/detail/future_state.hpp"

namespace weft::detail {

namespace {

thread_local worker* tls_worker = nullptr;
thread_local scheduler* tls_home = nullptr;


// ---- fiber switching ---------------------------------------------------------

/// What the fiber we switch to must do on behalf of the one we leave, once
/// the leaving fiber's context is saved (doing it earlier would let another
/// worker resume a fiber that has not finished stopping).
struct switch_action {
  enum kind_t { none, recycle, wait, yield } kind;
  fiber* from;
  event* ev = nullptr;
  waiter* node = nullptr;
};

struct fiber_waiter : waiter {
  fiber* f;
  scheduler* home;
};

void make_runnable(fiber* f, scheduler* home) noexcept { spawn_to(home, &f->resume); }

void after_switch(bctx::transfer_t t) noexcept {
  auto* act = static_cast<switch_action*>(t.data);
  fiber* from = act->from;
  from->ctx = t.fctx;
  worker* w = current_worker();
  switch (act->kind) {
    case switch_action::none:
      break;
    case switch_action::recycle:
      w->pool.give(from);
      break;
    case switch_action::wait: {
      event* ev = act->ev;  // copy out: once queued, `from` may resume and reuse its stack
      waiter* node = act->node;
      w->finished.inc();
      if (!ev->add(node)) make_runnable(from, w->sched);
      break;
    }
    case switch_action::yield:
      w->finished.inc();
      w->spawned.inc();
      w->yielded.push_back(&from->resume);
      break;
  }
}

[[noreturn]] void fiber_main(bctx::transfer_t t) noexcept;
void resume_fiber(task_base* t) noexcept;

/// A fiber from the worker's pool; a stack the kernel will not map (too
/// many tasks suspended at once) ends the job with the reason.
fiber* take_fiber(worker& w) noexcept {
  try {
    return w.pool.take();
  } catch (const std::exception& e) {
    if (fatal_handler != nullptr) fatal_handler(e.what());
    std::fprintf(stderr, "weft: %s\n", e.what());
    std::_Exit(1);
  }
}

/// Leaves the running fiber for a fresh one that runs the worker loop.
void switch_to_fresh(worker* w, switch_action& act) noexcept {
  publish_sends(*w);  // what this task sent, before it gives up the worker
  fiber* self = w->current;
  self->resume.run = &resume_fiber;
  fiber* next = take_fiber(*w);
  fiber_prepare(next, &fiber_main);
  w->current = next;
  const trace::label suspended = trace::interval_end();  // kept on this fiber's stack until it resumes
  bctx::transfer_t t = fiber_jump(self, next, &act, false);
  after_switch(t);  // resumed, possibly on another worker
  trace::interval_begin(suspended);
}

void resume_fiber(task_base* t) noexcept {
  fiber* target = reinterpret_cast<fiber*>(reinterpret_cast<char*>(t) - offsetof(fiber, resume));
  worker* w = current_worker();
  fiber* self = w->current;
  w->current = target;
  switch_action act{switch_action::recycle, self};
  fiber_jump(self, target, &act, true);
  __builtin_unreachable();  // nobody resumes a recycled context
}

[[noreturn]] void fiber_main(bctx::transfer_t t) noexcept {
  fiber_started(current_worker()->current);
  after_switch(t);
  for (;;) {
    worker* w = current_worker();
    task_base* item = w->sched->find_work(*w);
    if (item == nullptr) {
      if (w->sched->idle_wait(*w)) {
        fiber* self = w->current;
        switch_action act{switch_action::recycle, self};
        fiber_jump(self, w->thread_fiber, &act, true);
        __builtin_unreachable();
      }
      continue;
    }
    trace::interval_begin();
    item->run(item);
    trace::interval_end();
    worker* done_on = current_worker();  // the task may have moved to another worker
    publish_sends(*done_on);
    done_on->finished.inc();
  }
}

}  // namespace

void (*fatal_handler)(const char* message) noexcept = nullptr;
task_base* (*foreign_work)(scheduler& s, worker& w) noexcept = nullptr;
bool (*foreign_work_expected)(scheduler& s) noexcept = nullptr;

// Never inlined: a fiber can resume on another thread, so the address of a
// thread_local must be computed afresh on every call, not hoisted out of a
// loop that contains a fiber switch.
[[gnu::noinline]] worker* current_worker() noexcept {
  worker* volatile w = tls_worker;
  return w;
}

[[gnu::noinline]] scheduler*& home_scheduler() noexcept { return tls_home; }

namespace {
/// The trace recorder's question: which rank and worker is this thread.
void identify_for_trace(int& rank, int& index) noexcept {
  if (worker* w = current_worker()) {
    rank = w->sched->rank();
    index = w->index;
  } else if (scheduler* s = home_scheduler()) {
    rank = s->rank();
  }
}
}  // namespace

// ---- scheduler ---------------------------------------------------------------

scheduler::scheduler(int rank, const sched_options& opts) : rank_(rank), opts_(opts) {
  if (opts_.threads < 1) opts_.threads = 1;
  enable_asymmetric_fences();  // before any worker runs light_fence
  trace::identify_thread = &identify_for_trace;
  for (int i = 0; i < opts_.threads; ++i) {
    workers_.push_back(std::make_unique<worker>(this, i, opts_.stack_size));
    workers_.back()->rng = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(i + 1) + static_cast<std::uint64_t>(rank);
  }
}

scheduler::~scheduler() {
  if (!stopping_.load()) stop();
}

void scheduler::start() {
  for (auto& w : workers_) {
    worker* wp = w.get();
    w->thread = std::thread([this, wp] { worker_main(*wp); });
  }
}

void scheduler::worker_main(worker& w) {
  tls_worker = &w;
  tls_home = this;
  if (opts_.cores != nullptr) opts_.cores->pin_this_thread(opts_.first_core + w.index);
  const alt_signal_stack signal_stack;  // a task that overflows its stack is reported from there
  w.thread_fiber = fiber_for_thread();
  fiber* f = take_fiber(w);
  fiber_prepare(f, &fiber_main);
  w.current = f;
  switch_action act{switch_action::none, w.thread_fiber};
  bctx::transfer_t t = fiber_jump(w.thread_fiber, f, &act, false);
  after_switch(t);  // the last fiber handed itself back to the pool
  fiber_destroy(w.thread_fiber);
  w.thread_fiber = nullptr;
  tls_worker = nullptr;
}

void scheduler::stop() {
  wait_quiescent();
  stopping_.store(true, std::memory_order_seq_cst);
  wake_all();
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
  while (injectors_.load(std::memory_order_acquire) != 0) sched_yield();
  // A shared slot goes away with its transport, which may end before this
  // scheduler: nobody sleeps any more, so later wake-ups use the own slot.
  // (Written only when shared: threads of other ranks may still read it.)
  if (slot_ != &own_slot_) {
    slot_ = &own_slot_;
    slot_shared_ = false;
  }
}

void scheduler::inject(task_base* t) noexcept {
  // The task is visible (and may complete, letting finalize proceed) before
  // this call returns, so announce ourselves: stop() waits for us to leave.
  injectors_.fetch_add(1, std::memory_order_acq_rel);
  injected_spawned_.fetch_add(1, std::memory_order_release);  // counted before it can finish
  injected_.push(t);
  wake_one();
  injectors_.fetch_sub(1, std::memory_order_acq_rel);
}

void scheduler::wake_sleeper() noexcept {
  slot_->epoch.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(slot_->epoch, 1, slot_shared_);
}

void scheduler::wake_all() noexcept {
  slot_->epoch.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(slot_->epoch, 1 << 30, slot_shared_);
}

bool scheduler::has_local_work(const worker& w) const noexcept {
  return !w.deque.empty() || !w.inbox.empty() || !injected_.empty();
}

bool scheduler::has_visible_work() const noexcept {
  if (!injected_.empty()) return true;
  for (auto& w : workers_)
    if (!w->deque.empty() || !w->inbox.empty()) return true;
  return false;
}

task_base* scheduler::find_work(worker& w) noexcept {
  // Busy workers drive communication too, now and then: a rank whose
  // workers never run dry must still deliver what other ranks wait for.
  if (idle_poll && (++w.polls & 63) == 0) idle_poll();
  if (task_base* t = take_local(w)) return t;
  if (task_base* t = w.deferred) {
    w.deferred = t->next;
    t->next = nullptr;
    --w.n_deferred;
    return t;
  }
  if (!w.yielded.empty()) {
    // Only yielded tasks left: they are typically waiting for a message,
    // so poll before resuming them.
    if (idle_poll && idle_poll())
      if (task_base* t = take_local(w)) return t;
    task_base* t = w.yielded.front();
    w.yielded.pop_front();
    return t;
  }
  const int n = num_workers();
  if (n > 1) {
    // xorshift64: a random first victim, then every other worker in turn.
    w.rng ^= w.rng << 13;
    w.rng ^= w.rng >> 7;
    w.rng ^= w.rng << 17;
    int start = static_cast<int>(w.rng % static_cast<std::uint64_t>(n));
    for (int k = 0; k < n; ++k) {
      int v = (start + k) % n;
      if (v == w.index) continue;
      if (task_base* t = workers_[v]->deque.steal()) return t;
    }
    // Placed work last: it waits for its worker unless nothing else is left.
    for (int k = 0; k < n; ++k) {
      int v = (start + k) % n;
      if (v == w.index) continue;
      if (task_base* t = take_placed(w, *workers_[v])) return t;
    }
  }
  if (foreign_work != nullptr)
    if (task_base* t = foreign_work(*this, w)) {
      w.spawned.inc();
      return t;
    }
  return nullptr;
}

task_base* scheduler::take_local(worker& w) noexcept {
  if (task_base* t = w.deque.pop()) return t;
  if (task_base* t = take_placed(w, w)) return t;
  return injected_.take();
}

task_base* scheduler::take_placed(worker& w, worker& from) noexcept {
  task_base* t = from.inbox.take_all();
  if (t == nullptr) return nullptr;
  // Usually one task. More: all but the oldest go onto w's deque, newest
  // first, so w pops them oldest-first and idle siblings may steal them.
  while (t->next != nullptr) {
    task_base* older = t->next;
    t->next = nullptr;
    w.deque.push(t);
    t = older;
  }
  return t;
}

bool scheduler::idle_wait(worker& w) noexcept {
  // Spin (cheap, fast reaction), then give the core away, then sleep. A
  // worker whose last sleep ran out with nothing for it goes straight back
  // to sleep after one look: spinning after every nap kept the cores of an
  // oversubscribed node busy with ranks that had nothing to do, away from
  // the ranks that had.
  if (!w.dozing) {
    for (int i = 0; i < opts_.spin_rounds; ++i) {
      if (has_visible_work() || !w.yielded.empty()) return false;
      if (foreign_work != nullptr)
        if (task_base* t = foreign_work(*this, w)) {
          w.deque.push(t);
          w.spawned.inc();
          return false;
        }
      if (idle_poll && idle_poll()) return false;
      if (!idle_poll || !opts_.poll_replaces_pause) cpu_relax();
    }
    for (int i = 0; i < opts_.yield_rounds; ++i) {
      if (has_visible_work() || !w.yielded.empty()) return false;
      if (idle_poll && idle_poll()) return false;
      sched_yield();
    }
  }
  if (stopping_.load(std::memory_order_acquire)) return true;
  slot_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  heavy_fence();  // see wake_one
  const std::uint32_t e = slot_->epoch.load(std::memory_order_seq_cst);
  // The last look covers everything a producer publishes before calling
  // wake_one: tasks (deques, injection queue) and incoming messages (poll).
  const bool found = has_visible_work() || !w.yielded.empty() || (idle_poll && idle_poll()) ||
                     stopping_.load(std::memory_order_seq_cst);
  if (!found)
    // With a poll hook (worker-driven progress) nap briefly instead, so
    // incoming messages are still noticed.
    futex_wait(slot_->epoch, e,
               idle_poll || (foreign_work_expected != nullptr && foreign_work_expected(*this)) ? opts_.idle_nap_ns
                                                                                               : 0L,
               slot_shared_);
  slot_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
  w.dozing = !found && slot_->epoch.load(std::memory_order_relaxed) == e;
  return false;
}

bool scheduler::quiescent() const noexcept {
  // Read finished before spawned: every finished item was spawned earlier,
  // so equal sums mean nothing was outstanding when `finished` was read.
  std::uint64_t fin = 0, spawned = 0;
  for (auto& w : workers_) fin += w->finished.get();
  for (auto& w : workers_) spawned += w->spawned.get();
  spawned += injected_spawned_.load(std::memory_order_acquire);
  return fin == spawned;
}

std::uint64_t scheduler::messages_sent_by_workers() const noexcept {
  std::uint64_t n = 0;
  for (auto& w : workers_) n += w->messages_sent.get();
  return n;
}

void scheduler::wait_quiescent() const noexcept {
  int rounds = 0;
  while (!quiescent()) {
    if (++rounds < 100)
      sched_yield();
    else
      usleep(50);
  }
}

// ---- the calls <weft/sched.hpp> makes ----------------------------------------

bool on_worker() noexcept { return current_worker() != nullptr; }

int& held_by_current_task() noexcept {
  if (worker* w = current_worker()) return w->current->held;
  thread_local int off_workers = 0;
  return off_workers;
}

bool current_stack(const char*& lo, const char*& hi) noexcept {
  worker* w = current_worker();
  if (w == nullptr || w->current == nullptr || !w->current->owns_stack) return false;
  lo = w->current->stack_lo;
  hi = w->current->stack_lo + w->current->stack_size;
  return true;
}

bool defer_cleanup(task_base* t) noexcept {
  worker* w = current_worker();
  // Bounded: a worker that is never idle still frees what its tasks held.
  if (w == nullptr || w->n_deferred >= 32) return false;
  t->next = w->deferred;
  w->deferred = t;
  ++w->n_deferred;
  w->spawned.inc();  // finished when it has run (the worker loop counts it)
  return true;
}

namespace {
/// The worker an on_thread index asks for (modulo the rank's worker count).
int placed_worker(int index, int workers) noexcept { return ((index % workers) + workers) % workers; }
}  // namespace

void* begin_holding_own_placed() noexcept {
  worker* w = current_worker();
  if (w != nullptr) w->holding_placed = true;
  return w;
}

bool hold_own_placed(void* target, int index, task_base* t) noexcept {
  worker* w = current_worker();
  if (w == nullptr || !w->holding_placed || target != w->sched ||
      placed_worker(index, w->sched->num_workers()) != w->index)
    return false;
  t->next = w->held_placed;
  w->held_placed = t;
  return true;
}

void release_own_placed(void* holder) noexcept {
  auto* w = static_cast<worker*>(holder);
  if (w == nullptr) return;
  w->holding_placed = false;
  // Queued oldest first, as spawn_on_thread would have (the list is newest first).
  task_base* oldest_first = nullptr;
  for (task_base* t = std::exchange(w->held_placed, nullptr); t != nullptr;) {
    task_base* next = t->next;
    t->next = oldest_first;
    oldest_first = t;
    t = next;
  }
  if (oldest_first == nullptr) return;
  while (oldest_first != nullptr) {
    task_base* next = std::exchange(oldest_first->next, nullptr);
    w->deque.push(oldest_first);
    w->spawned.inc();
    oldest_first = next;
  }
  w->sched->wake_one();
}

void* current_scheduler() noexcept {
  if (worker* w = current_worker()) return w->sched;
  return home_scheduler();
}

void spawn_to(void* target, task_base* t) noexcept {
  worker* w = current_worker();
  if (w != nullptr && (target == nullptr || target == w->sched)) {
    w->deque.push(t);
    w->spawned.inc();
    w->sched->wake_one();
    return;
  }
  spawn_elsewhere(target, t);
}

void spawn_on_thread(void* target, int index, task_base* t) noexcept {
  worker* w = current_worker();
  if (w == nullptr || (target != nullptr && target != w->sched)) {
    spawn_elsewhere(target, t);  // off this rank's workers: the hint does not apply
    return;
  }
  scheduler* s = w->sched;
  const int n = s->num_workers();
  const int k = placed_worker(index, n);
  if (k == w->index) {
    w->deque.push(t);
  } else {
    s->post_to_worker(k, t);
  }
  w->spawned.inc();
  s->wake_one();
}

bool spawn_quietly(scheduler* target, task_base* t) noexcept {
  worker* w = current_worker();
  if (w != nullptr && target == w->sched) {
    w->deque.push(t);
    w->spawned.inc();
    return true;
  }
  spawn_elsewhere(target, t);
  return false;
}

void wake_one_worker(scheduler* s) noexcept { s->wake_one(); }

void spawn_elsewhere(void* target, task_base* t) noexcept {
  auto* s = static_cast<scheduler*>(target);
  if (s == nullptr) s = home_scheduler();
  if (s == nullptr) {
    std::fputs("weft: a task was started outside a running weft runtime (call weft::init or weft::run first)\n", stderr);
    std::abort();
  }
  s->inject(t);
}

void spawn(task_base* t) noexcept { spawn_to(nullptr, t); }

bool try_run_inline(const void* tag) noexcept {
  worker* w = current_worker();
  if (w == nullptr) return false;
  // Keep half the stack for whatever the inlined task does; past that, block
  // and let a fresh fiber take the work, so recursion depth is unbounded.
  if (stack_left(w->current) < w->pool.stack_size() / 2) return false;
  task_base* t = w->deque.pop();
  if (t == nullptr) return false;
  if (t->tag != tag) {
    w->deque.push(t);  // not ours: put it back where it was
    return false;
  }
  t->run(t);
  current_worker()->finished.inc();
  return true;
}

namespace {
/// A worker with nothing else queued waits a little for `e` before
/// suspending: results are often a microsecond away (the other half of a
/// parallel loop, a message already on its way), and suspending costs two
/// fiber switches plus a steal-back of the resumed fiber. Communication is
/// polled meanwhile; anything that lands in the deque ends the spin.
bool spin_before_suspend(event& e, worker& w) noexcept {
  scheduler& s = *w.sched;
  for (int i = 0; i < s.options().wait_spin_rounds; ++i) {
    if (e.is_set()) return true;
    if (!w.deque.empty()) return false;
    if (s.idle_poll) s.idle_poll();  // every round: the reply is often already on its way
    if (!s.idle_poll || !s.options().poll_replaces_pause) cpu_relax();
  }
  return e.is_set();
}
}  // namespace

void wait_for(event& e, const void* tag, bool spin) noexcept {
  worker* w = current_worker();
  if (w == nullptr) {
    struct thread_waiter : waiter {
      std::atomic<std::uint32_t> flag{0};
    } node;
    node.notify = [](waiter* n) noexcept {
      auto* tw = static_cast<thread_waiter*>(n);
      tw->flag.store(1, std::memory_order_release);
      futex_wake(tw->flag, 1);
    };
    if (e.add(&node))
      while (node.flag.load(std::memory_order_acquire) == 0) futex_wait(node.flag, 0, 0);
    return;
  }
  while (!e.is_set()) {
    if (tag != nullptr && try_run_inline(tag)) continue;
    w = current_worker();
    publish_sends(*w);  // what we wait for may answer a message sent just now
    if (spin && spin_before_suspend(e, *w)) return;
    fiber_waiter node;
    node.f = w->current;
    node.home = w->sched;
    node.notify = [](waiter* n) noexcept {
      auto* fw = static_cast<fiber_waiter*>(n);
      make_runnable(fw->f, fw->home);
    };
    switch_action act{switch_action::wait, w->current, &e, &node};
    switch_to_fresh(w, act);
  }
}

[[noreturn]] void fatal_uncaught(const char* where) noexcept {
  char msg[1024];
  try {
    throw;
  } catch (const std::exception& ex) {
    std::snprintf(msg, sizeof msg, "uncaught exception in %s: %s", where, ex.what());
  } catch (...) {
    std::snprintf(msg, sizeof msg, "uncaught exception of unknown type in %s", where);
  }
  if (fatal_handler != nullptr) fatal_handler(msg);
  std::fprintf(stderr, "weft: %s\n", msg);
  std::_Exit(1);
}

}  // namespace weft::detail

namespace weft::this_task {
void yield() {
  using namespace weft::detail;
  worker* w = current_worker();
  if (w == nullptr) {
    std::this_thread::yield();
    return;
  }
  switch_action act{switch_action::yield, w->current};
  switch_to_fresh(w, act);
}

bool yield_if_others_ready() {
  using namespace weft::detail;
  worker* w = current_worker();
  if (w == nullptr || !w->sched->has_local_work(*w)) return false;
  yield();
  return true;
}
}  // namespace weft::this_task
