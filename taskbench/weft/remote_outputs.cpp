#include <atomic>
#include "remote_outputs.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace taskbench_weft {

bool inject_corruption = false;

local_block::local_block(const taskbench::task_graph& g, int r, int n)
    : first(taskbench::block_first(r, n, g.max_width)),
      last(taskbench::block_first(r + 1, n, g.max_width)),
      rank(r),
      nranks(n),
      width(g.max_width) {}

// ---- wire --------------------------------------------------------------------

namespace wire {

namespace {
constexpr int max_ranks = 1024;
std::atomic<void*> registry[max_ranks];
std::uint64_t runs[max_ranks];
}  // namespace

std::uint64_t next_run(int rank) {
  if (rank >= max_ranks) {
    std::fprintf(stderr, "error: taskbench_weft supports at most %d ranks\n", max_ranks);
    std::exit(1);
  }
  return ++runs[rank];
}

void publish(int rank, void* box) { registry[rank].store(box, std::memory_order_release); }

void* registered(int rank) noexcept { return registry[rank].load(std::memory_order_acquire); }

void* abandoned() noexcept {
  static char mark;
  return &mark;
}

void stray(long t, long p, std::uint64_t run) {
  std::fprintf(stderr, "error: rank %d got the output of task (%ld, %ld) of run %llu outside that run\n",
               weft::rank(), t, p, static_cast<unsigned long long>(run));
  std::abort();
}

destinations::destinations(const taskbench::task_graph& g, const local_block& me, long t, long x) {
  if (me.nranks == 1) return;
  int last = me.rank;  // consumers come in runs of increasing points: skip repeats cheaply
  g.for_each_output(t, x, [&](long c) {
    const int r = me.owner(c);
    if (r == last) return;
    last = r;
    if (r != me.rank) add(r);
  });
}

void destinations::add(int r) {
  const int* b = begin();
  if (std::find(b, b + n_, r) != b + n_) return;
  if (heap_.empty() && n_ < std::size(small_)) {
    small_[n_++] = r;
    return;
  }
  if (heap_.empty()) heap_.assign(small_, small_ + n_);
  heap_.push_back(r);
  ++n_;
}

namespace {

/// Posts (t, x)'s output to `dest`, handled there by Box::arrived.
/// Testing aid: the first output the last rank sends at timestep 1.
bool corrupt_this(long t) {
  static std::atomic<bool> done{false};
  return inject_corruption && t == 1 && weft::rank() == weft::nranks() - 1 &&
         !done.exchange(true, std::memory_order_relaxed);
}

template <class Box>
void post(int dest, std::uint64_t run, long t, long x, const char* data, std::size_t n) {
  std::vector<char> corrupted;
  if (corrupt_this(t) && n != 0) {  // -weft-inject-corruption: the consumer must notice
    corrupted.assign(data, data + n);
    corrupted[n - 1] ^= 0x10;
    data = corrupted.data();
  }
  if (n == small_bytes && fits(t, x)) {
    small_payload bytes;
    std::memcpy(bytes.data(), data, small_bytes);
    weft::post_at(
        dest,
        [](std::uint64_t key, const small_payload& b) {
          Box::arrived(run_of(key), t_of(key), p_of(key), reinterpret_cast<const char*>(b.data()), small_bytes);
        },
        pack(run, t, x), bytes);
  } else {
    weft::post_at(
        dest, [](std::uint64_t r, long pt, long pp, std::vector<char> b) { Box::arrived(r, pt, pp, std::move(b)); },
        run, t, x, std::vector<char>(data, data + n));
  }
}

}  // namespace
}  // namespace wire

// ---- mailbox (dataflow) ------------------------------------------------------

mailbox::mailbox(const taskbench::task_graph& g, const local_block& me)
    : g_(g), me_(me), slots_(g.max_width, [this](long t, long p) { return local_consumers(t, p); }) {
  run_ = wire::next_run(me.rank);
  wire::publish(me.rank, this);
  weft::barrier();  // every rank can receive before anyone sends
}

mailbox::~mailbox() {
  // Every output sent to this rank was consumed by a local task, and the
  // caller waited for all of them; the barrier keeps run boundaries clean.
  // Not while a validation error unwinds: the other ranks may never get
  // here, and the error ends the job anyway; outputs that still arrive
  // until then are dropped.
  if (std::uncaught_exceptions() == 0) {
    weft::barrier();
    wire::publish(me_.rank, nullptr);
  } else {
    wire::publish(me_.rank, wire::abandoned());
  }
}

int mailbox::local_consumers(long t, long p) const {
  int n = 0;
  g_.for_each_output(t, p, [&](long x) { n += me_.owns(x) ? 1 : 0; });
  return n;
}

weft::shared_future<buffer> mailbox::take(long t, long p) { return slots_.take(t, p); }

void mailbox::arrived(std::uint64_t run, long t, long p, const char* data, std::size_t n) {
  void* where = wire::registered(weft::rank());
  if (where == wire::abandoned()) return;
  auto* box = static_cast<mailbox*>(where);
  if (box == nullptr || (box->run_ & 0xff) != (run & 0xff)) wire::stray(t, p, run);
  box->slots_.deliver(t, p, buffer(data, data + n));
}

void mailbox::arrived(std::uint64_t run, long t, long p, std::vector<char>&& data) {
  void* where = wire::registered(weft::rank());
  if (where == wire::abandoned()) return;
  auto* box = static_cast<mailbox*>(where);
  if (box == nullptr || box->run_ != run) wire::stray(t, p, run);
  box->slots_.deliver(t, p, buffer(std::move(data)));
}

void mailbox::send(long t, long x, const char* data) const {
  for (int r : wire::destinations(g_, me_, t, x))
    wire::post<mailbox>(r, run_, t, x, data, g_.output_bytes_per_task);
}

// ---- step_mailbox (spmd) -----------------------------------------------------

step_mailbox::step_mailbox(const taskbench::task_graph& g, const local_block& me)
    : g_(g), me_(me), index_(static_cast<std::size_t>(g.max_width), -1) {
  // The producers on other ranks of any local point, in any dependence set.
  std::vector<taskbench::interval> buf(g.max_intervals());
  for (long dset = 0; dset < g.max_dependence_sets(); ++dset)
    for (long x = me.first; x < me.last; ++x) {
      const std::size_t n = g.dependencies(dset, x, buf.data());
      for (std::size_t i = 0; i < n; ++i)
        for (long p = std::max(0L, buf[i].first); p <= std::min(g.max_width - 1, buf[i].second); ++p)
          if (!me.owns(p) && index_[static_cast<std::size_t>(p)] < 0) index_[static_cast<std::size_t>(p)] = static_cast<int>(remote_++);
    }
  slots_ = std::make_unique<slot[]>(static_cast<std::size_t>(window * remote_));
  for (long k = 0; k < window; ++k)
    for (long r = 0; r < remote_; ++r) {
      slot& s = slots_[static_cast<std::size_t>(k * remote_ + r)];
      s.state.store(open(k), std::memory_order_relaxed);
      s.data.resize(g.output_bytes_per_task);
    }
  // The same walk backwards: the consumers of each local point on other
  // ranks (for_each_output clips to the active points of the next step,
  // which here are all of them).
  using dt = taskbench::dependence_type;
  fixed_dests_ = me.nranks > 1 && g.type != dt::dom && g.type != dt::tree;
  if (fixed_dests_) {
    dests_at_.push_back(0);
    for (long dset = 0; dset < g.max_dependence_sets(); ++dset)
      for (long x = me.first; x < me.last; ++x) {
        const std::size_t begin = dests_.size();
        const std::size_t n = g.reverse_dependencies(dset, x, buf.data());
        for (std::size_t i = 0; i < n; ++i)
          for (long c = std::max(0L, buf[i].first); c <= std::min(g.max_width - 1, buf[i].second); ++c) {
            const int r = me.owner(c);
            if (r != me.rank && std::find(dests_.begin() + static_cast<std::ptrdiff_t>(begin), dests_.end(), r) == dests_.end())
              dests_.push_back(r);
          }
        dests_at_.push_back(dests_.size());
      }
  }
  run_ = wire::next_run(me.rank);
  wire::publish(me.rank, this);
  weft::barrier();  // every rank can receive before anyone sends
}

step_mailbox::~step_mailbox() {
  if (std::uncaught_exceptions() == 0) {  // see ~mailbox
    weft::barrier();
    wire::publish(me_.rank, nullptr);
  } else {
    wire::publish(me_.rank, wire::abandoned());
  }
}

void step_mailbox::send(long t, long x, const char* data) const {
  if (me_.nranks == 1 || t + 1 >= g_.steps) return;
  if (fixed_dests_) {
    const std::size_t i = static_cast<std::size_t>(g_.dependence_set_at(t + 1) * (me_.last - me_.first) + (x - me_.first));
    for (std::size_t k = dests_at_[i]; k < dests_at_[i + 1]; ++k)
      wire::post<step_mailbox>(dests_[k], run_, t, x, data, g_.output_bytes_per_task);
    return;
  }
  for (int r : wire::destinations(g_, me_, t, x))
    wire::post<step_mailbox>(r, run_, t, x, data, g_.output_bytes_per_task);
}

void step_mailbox::start(long t, const long* producers, std::size_t n, pending_job& c) {
  c.missing_.store(n + 1, std::memory_order_relaxed);
  c.phase_.store(pending_job::running, std::memory_order_relaxed);
  c.wake_ = nullptr;
  c.error_ = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    slot& s = at(t, producers[i]);
    link& l = c.links_[i];
    l.job = &c;
    link* head = s.waiters.load(std::memory_order_acquire);
    bool queued = false;
    while (head != closed()) {
      l.next = head;
      if (s.waiters.compare_exchange_weak(head, &l, std::memory_order_acq_rel, std::memory_order_acquire)) {
        queued = true;
        break;
      }
    }
    if (!queued) c.missing_.fetch_sub(1, std::memory_order_acq_rel);  // filled meanwhile (never the last)
  }
  arrive(c);  // the registration's own count: runs the job here if everything arrived
}

void step_mailbox::wait(pending_job& c) {
  // Yielding lets this worker poll the transport and run handlers (two fiber
  // switches per round, nothing allocated); past that the task blocks.
  for (int i = 0; i < yield_rounds && c.phase_.load(std::memory_order_acquire) != pending_job::done; ++i)
    weft::this_task::yield();
  if (c.phase_.load(std::memory_order_acquire) != pending_job::done) {
    weft::promise<void> wake;
    weft::future<void> woken = wake.get_future();
    c.wake_ = &wake;
    int expected = pending_job::running;
    if (c.phase_.compare_exchange_strong(expected, pending_job::blocked, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
      woken.get();
    else
      wake.set_value();  // done meanwhile (an unsatisfied promise would make an exception)
  }
  if (c.error_) std::rethrow_exception(c.error_);
}

void step_mailbox::arrive(pending_job& c) noexcept {
  if (c.missing_.fetch_sub(1, std::memory_order_acq_rel) == 1) finish(c);
}

void step_mailbox::finish(pending_job& c) noexcept {
  try {
    c.fn_(c.ctx_);
  } catch (...) {
    c.error_ = std::current_exception();  // for the waiting task to rethrow
  }
  // Once `done` is visible a waiter that did not block may return and reuse
  // `c`; one that blocked (and set `wake_` before saying so) waits for this.
  if (c.phase_.exchange(pending_job::done, std::memory_order_acq_rel) == pending_job::blocked) c.wake_->set_value();
}

void step_mailbox::fill(slot& s, long t) {
  s.state.store(ready(t), std::memory_order_release);
  link* l = s.waiters.exchange(closed(), std::memory_order_acq_rel);
  while (l != nullptr) {
    link* next = l->next;  // read before arriving: the job may be reused once it ran
    arrive(*l->job);
    l = next;
  }
}
bool step_mailbox::try_fill(long t, long p, const char* data, std::size_t n) {
  slot& s = at(t, p);
  if (s.state.load(std::memory_order_seq_cst) != open(t)) return false;
  if (s.data.size() == n)
    std::memcpy(s.data.data(), data, n);
  else
    s.data.assign(data, data + n);
  fill(s, t);
  return true;
}

void step_mailbox::arrived(std::uint64_t run, long t, long p, const char* data, std::size_t n) {
  void* where = wire::registered(weft::rank());
  if (where == wire::abandoned()) return;
  auto* box = static_cast<step_mailbox*>(where);
  if (box == nullptr || (box->run_ & 0xff) != (run & 0xff) || p < 0 || p >= box->g_.max_width ||
      box->index_[static_cast<std::size_t>(p)] < 0)
    wire::stray(t, p, run);
  if (box->try_fill(t, p, data, n)) return;
  box->keep_early(t, p, std::vector<char>(data, data + n));
}

void step_mailbox::arrived(std::uint64_t run, long t, long p, std::vector<char>&& data) {
  void* where = wire::registered(weft::rank());
  if (where == wire::abandoned()) return;
  auto* box = static_cast<step_mailbox*>(where);
  if (box == nullptr || box->run_ != run || p < 0 || p >= box->g_.max_width ||
      box->index_[static_cast<std::size_t>(p)] < 0)
    wire::stray(t, p, run);
  slot& s = box->at(t, p);
  if (s.state.load(std::memory_order_seq_cst) == open(t)) {
    s.data = std::move(data);
    box->fill(s, t);
    return;
  }
  box->keep_early(t, p, std::move(data));
}

void step_mailbox::keep_early(long t, long p, std::vector<char>&& data) {
  {
    std::lock_guard hold(early_lock_);
    early_.emplace(std::pair{t, p}, std::move(data));
  }
  early_count_.fetch_add(1, std::memory_order_seq_cst);
  take_early(t);  // its slot may have opened meanwhile
}

void step_mailbox::take_early(long t) {
  // Take the outputs of step t whose slots are open under the lock, fill
  // them outside it: filling may run a job, which sends, which may let this
  // worker run another handler that comes here again.
  std::vector<std::pair<long, std::vector<char>>> now;
  {
    std::lock_guard hold(early_lock_);
    for (auto it = early_.lower_bound({t, 0}); it != early_.end() && it->first.first == t;) {
      const long p = it->first.second;
      if (at(t, p).state.load(std::memory_order_seq_cst) == open(t)) {
        now.emplace_back(p, std::move(it->second));
        it = early_.erase(it);
        early_count_.fetch_sub(1, std::memory_order_relaxed);
      } else {
        ++it;
      }
    }
  }
  // Each taken output is the only one for its slot and timestep: nobody
  // else fills it, and it cannot reopen before it was filled and consumed.
  for (auto& [p, data] : now) {
    slot& s = at(t, p);
    s.data = std::move(data);
    fill(s, t);
  }
}

void step_mailbox::step_done(long t) {
  if (t < 0 || remote_ == 0) return;
  slot* row = &slots_[static_cast<std::size_t>((t % window) * remote_)];
  for (long r = 0; r < remote_; ++r) {
    row[r].waiters.store(nullptr, std::memory_order_relaxed);
    row[r].state.store(open(t + window), std::memory_order_seq_cst);  // after the reset above (release)
  }
  // An output for t + window may have arrived before this: it is waiting in
  // early_ (the seq_cst pair, store above / count increment in keep_early,
  // makes sure one of the two sides sees the other).
  if (early_count_.load(std::memory_order_seq_cst) != 0) take_early(t + window);
}

}  // namespace taskbench_weft
