// weft — the intra-rank task layer: futures, async, fork-join.
//
//   weft::future<int> f = weft::async([] { return 6 * 7; });
//   int v = f.get();                       // suspends this task, not the worker
//
//   weft::task_group g;                    // nested fork-join
//   g.run([] { left(); });  g.run([] { right(); });  g.wait();
//
//   weft::parallel_for(0, n, 1024, [&](long i) { y[i] += a * x[i]; });
//
// Every blocking call (future::get, task_group::wait, when_all(...).get())
// made from inside a task suspends that task's fiber and lets the worker run
// other work; called from a plain thread (e.g. main under weft::init) it
// blocks the thread. Exceptions thrown by a task travel to whoever calls
// get()/wait().
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/detail/future_state.hpp"
#include "weft/detail/task.hpp"

namespace weft {

template <class T> class future;
template <class T> class shared_future;
template <class T> class promise;

/// Thrown by get() on a future whose promise was destroyed unsatisfied, or
/// by misuse (get on an empty future, setting a promise twice).
class future_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Placement hint for async and dataflow: run on worker thread `index` of
/// the calling rank (taken modulo weft::num_threads()). Keeping the tasks
/// that touch the same data on one worker keeps that data in its cache; the
/// hint is not a binding — a worker with nothing else to do takes placed
/// work from a busy sibling, so load still balances. Ignored when the task
/// is started off the rank's workers.
///
///   weft::on_thread where{x * weft::num_threads() / width};
///   next[x] = weft::dataflow(where, step, std::vector{cur[x - 1], cur[x], cur[x + 1]}).share();
struct on_thread {
  int index;
};

namespace detail {
template <class T> class continuation;
template <class F> struct access;  // when_all/then reach the state through this

inline void check_valid(const void* s) {
  if (s == nullptr) throw future_error("weft: operation on an empty (moved-from or consumed) future");
}
}  // namespace detail

/// Move-only handle to a value that becomes available later. get() consumes it.
template <class T>
class future {
 public:
  using value_type = T;
  future() noexcept = default;
  future(future&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  future& operator=(future&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  future(const future&) = delete;
  future& operator=(const future&) = delete;
  ~future() { reset(); }

  bool valid() const noexcept { return s_ != nullptr; }
  bool is_ready() const noexcept { return s_ != nullptr && s_->ready(); }

  /// Waits until ready (without consuming).
  void wait() const {
    detail::check_valid(s_);
    s_->wait();
  }

  /// Waits, then returns the value (or rethrows the task's exception). The
  /// future is empty afterwards.
  T get() {
    detail::check_valid(s_);
    s_->wait();
    auto* s = std::exchange(s_, nullptr);
    struct releaser {
      detail::state<T>* s;
      ~releaser() { s->release(); }
    } r{s};
    if constexpr (std::is_void_v<T>) {
      s->value();
    } else {
      return std::move(s->value());
    }
  }

  /// Runs `f(future<T>)` as a new task once this future is ready; returns
  /// the future of its result. Consumes this future.
  template <class F>
  auto then(F&& f) -> future<std::invoke_result_t<std::decay_t<F>, future<T>>>;

  shared_future<T> share() noexcept { return shared_future<T>(std::exchange(s_, nullptr)); }

 private:
  template <class> friend class future;
  template <class> friend class shared_future;
  template <class> friend class promise;
  template <class> friend struct detail::access;
  explicit future(detail::state<T>* s) noexcept : s_(s) {}
  void reset() noexcept {
    if (s_) std::exchange(s_, nullptr)->release();
  }
  detail::state<T>* s_ = nullptr;
};

/// Copyable future: many consumers read the same value (by const reference).
template <class T>
class shared_future {
 public:
  using value_type = T;
  shared_future() noexcept = default;
  shared_future(future<T>&& f) noexcept : s_(std::exchange(f.s_, nullptr)) {}
  shared_future(const shared_future& o) noexcept : s_(o.s_) {
    if (s_) s_->add_ref();
  }
  shared_future(shared_future&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  shared_future& operator=(shared_future o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  ~shared_future() {
    if (s_) s_->release();
  }

  bool valid() const noexcept { return s_ != nullptr; }
  bool is_ready() const noexcept { return s_ != nullptr && s_->ready(); }
  void wait() const {
    detail::check_valid(s_);
    s_->wait();
  }
  /// Waits, then returns a reference to the value (valid while any copy of
  /// this shared_future lives), or rethrows the task's exception.
  decltype(auto) get() const {
    detail::check_valid(s_);
    s_->wait();
    if constexpr (std::is_void_v<T>) {
      s_->value();
    } else {
      return static_cast<const T&>(s_->value());
    }
  }

  template <class F>
  auto then(F&& f) const -> future<std::invoke_result_t<std::decay_t<F>, shared_future<T>>>;

 private:
  template <class> friend class future;
  template <class> friend struct detail::access;
  explicit shared_future(detail::state<T>* s) noexcept : s_(s) {}
  detail::state<T>* s_ = nullptr;
};

/// The producing side of a future. Destroying an unsatisfied promise makes
/// its future throw future_error ("broken promise") instead of hanging.
template <class T>
class promise {
 public:
  promise() : s_(new detail::plain_state<T>(1)) {}
  promise(promise&& o) noexcept
      : s_(std::exchange(o.s_, nullptr)), retrieved_(o.retrieved_), satisfied_(o.satisfied_) {}
  promise& operator=(promise&& o) noexcept {
    if (this != &o) {
      abandon();
      s_ = std::exchange(o.s_, nullptr);
      retrieved_ = o.retrieved_;
      satisfied_ = o.satisfied_;
    }
    return *this;
  }
  promise(const promise&) = delete;
  promise& operator=(const promise&) = delete;
  ~promise() { abandon(); }

  future<T> get_future() {
    detail::check_valid(s_);
    if (retrieved_) throw future_error("weft: promise::get_future called twice");
    retrieved_ = true;
    s_->add_ref();
    return future<T>(s_);
  }

  template <class... A>
  void set_value(A&&... a) {
    claim();
    s_->set_value(std::forward<A>(a)...);
  }
  void set_exception(std::exception_ptr e) {
    claim();
    s_->set_exception(std::move(e));
  }

 private:
  void claim() {
    detail::check_valid(s_);
    if (satisfied_) throw future_error("weft: promise already satisfied");
    satisfied_ = true;
  }
  void abandon() noexcept {
    if (!s_) return;
    if (!satisfied_)
      s_->set_exception(std::make_exception_ptr(future_error("weft: broken promise")));
    std::exchange(s_, nullptr)->release();
  }
  detail::state<T>* s_;
  bool retrieved_ = false;
  bool satisfied_ = false;
};

namespace detail {

template <class F>
struct access {
  template <class T>
  static future<T> make(state<T>* s) noexcept { return future<T>(s); }
  template <class T>
  static state<T>* get(const future<T>& f) noexcept { return f.s_; }
  template <class T>
  static state<T>* get(const shared_future<T>& f) noexcept { return f.s_; }
};

}  // namespace detail

template <class T>
future<std::decay_t<T>> make_ready_future(T&& v) {
  auto* s = new detail::plain_state<std::decay_t<T>>(1);
  s->set_value(std::forward<T>(v));
  return detail::access<void>::template make<std::decay_t<T>>(s);
}
inline future<void> make_ready_future() {
  auto* s = new detail::plain_state<void>(1);
  s->set_value();
  return detail::access<void>::template make<void>(s);
}
template <class T>
future<T> make_exceptional_future(std::exception_ptr e) {
  auto* s = new detail::plain_state<T>(1);
  s->set_exception(std::move(e));
  return detail::access<void>::template make<T>(s);
}

namespace detail {

struct no_hold {};

/// Runs `fn` and stores its result (or exception) in `s`. A `Hold` object
/// lives from when `fn` returns until the store, which wakes the state's
/// waiters, is done (dataflow: own_placed_hold). Not across `fn` itself:
/// it may block and resume on another worker.
template <class R, class Fn, class Hold = no_hold>
void fulfil(state<R>& s, Fn& fn) noexcept {
  std::optional<Hold> hold;
  try {
    if constexpr (std::is_void_v<R>) {
      std::invoke(fn);
      hold.emplace();
      s.set_value();
    } else {
      // The result stays the temporary set_value takes (no extra move).
      auto then_hold = [&hold](auto&& v) -> decltype(auto) {
        hold.emplace();
        return std::forward<decltype(v)>(v);
      };
      s.set_value(then_hold(std::invoke(fn)));
    }
  } catch (...) {
    if (!hold) hold.emplace();
    s.set_exception(std::current_exception());
  }
}

/// weft::async's task: the shared state and the work in one allocation.
/// Two references: the future and the pending run.
template <class R, class Fn>
class async_task final : public state<R>, public task_base {
 public:
  using result_type = R;
  explicit async_task(Fn&& fn)
      : state<R>([](state_base* s) { delete static_cast<async_task*>(s); }, 2),
        fn_(std::move(fn)) {
    task_base::run = &run_it;
    task_base::tag = static_cast<state_base*>(this);
  }

 private:
  static void run_it(task_base* t) noexcept {
    auto* self = static_cast<async_task*>(t);
    fulfil<R>(*self, self->fn_);
    self->release();
  }
  Fn fn_;
};

/// The task async(f, args...) runs: f and its arguments moved in.
template <class F, class... Args>
auto make_async_task(F&& f, Args&&... args) {
  auto fn = [f = std::forward<F>(f), ... a = std::forward<Args>(args)]() mutable -> decltype(auto) {
    return std::invoke(std::move(f), std::move(a)...);
  };
  using Fn = decltype(fn);
  return new async_task<std::invoke_result_t<Fn&>, Fn>(std::move(fn));
}

/// future::then's continuation: waits on the source state, then runs as a
/// task. References: the returned future and the pending run.
template <class R, class Src, class Fn>
class then_task final : public state<R>, public task_base, public waiter {
 public:
  then_task(Src&& src, Fn&& fn)
      : state<R>([](state_base* s) { delete static_cast<then_task*>(s); }, 2),
        src_(std::move(src)),
        fn_(std::move(fn)),
        home_(current_scheduler()) {
    task_base::run = &run_it;
    task_base::tag = static_cast<state_base*>(this);
    waiter::notify = [](waiter* w) noexcept {
      auto* self = static_cast<then_task*>(w);
      spawn_to(self->home_, self);
    };
  }
  void arm() noexcept {
    if (!access<void>::get(src_)->add_waiter(this)) spawn(this);
  }

 private:
  static void run_it(task_base* t) noexcept {
    auto* self = static_cast<then_task*>(t);
    auto call = [self]() -> decltype(auto) { return std::invoke(std::move(self->fn_), std::move(self->src_)); };
    fulfil<R>(*self, call);
    self->release();
  }
  Src src_;
  Fn fn_;
  void* home_;  // the rank that created the continuation runs it
};

template <class Src, class F>
auto make_then(Src&& src, F&& f) {
  using Fn = std::decay_t<F>;
  using R = std::invoke_result_t<Fn, Src>;
  auto* t = new then_task<R, Src, Fn>(std::move(src), Fn(std::forward<F>(f)));
  t->arm();
  return access<void>::template make<R>(t);
}

}  // namespace detail

template <class T>
template <class F>
auto future<T>::then(F&& f) -> future<std::invoke_result_t<std::decay_t<F>, future<T>>> {
  detail::check_valid(s_);
  return detail::make_then(std::move(*this), std::forward<F>(f));
}

template <class T>
template <class F>
auto shared_future<T>::then(F&& f) const
    -> future<std::invoke_result_t<std::decay_t<F>, shared_future<T>>> {
  detail::check_valid(s_);
  return detail::make_then(shared_future<T>(*this), std::forward<F>(f));
}

/// Runs `f(args...)` as a new task; returns the future of its result. The
/// arguments are moved/copied into the task (like std::async).
template <class F, class... Args>
  requires(!std::is_same_v<std::decay_t<F>, on_thread>)
auto async(F&& f, Args&&... args) {
  auto* t = detail::make_async_task(std::forward<F>(f), std::forward<Args>(args)...);
  detail::spawn(t);
  return detail::access<void>::template make<typename std::remove_pointer_t<decltype(t)>::result_type>(t);
}

/// async with a placement hint (see on_thread).
template <class F, class... Args>
auto async(on_thread where, F&& f, Args&&... args) {
  auto* t = detail::make_async_task(std::forward<F>(f), std::forward<Args>(args)...);
  detail::spawn_on_thread(detail::current_scheduler(), where.index, t);
  return detail::access<void>::template make<typename std::remove_pointer_t<decltype(t)>::result_type>(t);
}

// ---- when_all ---------------------------------------------------------------

namespace detail {

/// Counts inputs down to zero, then publishes the collected futures.
template <class Result>
class when_all_state final : public state<Result> {
 public:
  struct node : waiter {
    when_all_state* owner;
  };
  when_all_state(Result&& r, std::size_t n)
      : state<Result>([](state_base* s) { delete static_cast<when_all_state*>(s); }, 1),
        result_(std::move(r)),
        nodes_(n),
        remaining_(n + 1) {}
  void watch(std::size_t i, state_base* s) noexcept {
    nodes_[i].owner = this;
    nodes_[i].notify = [](waiter* w) noexcept { static_cast<node*>(w)->owner->arrive(); };
    if (!s->add_waiter(&nodes_[i])) arrive();
  }
  void arrive() noexcept {
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      this->set_value(std::move(result_));
      this->release();  // the reference held while inputs were pending
    }
  }
  Result& result() noexcept { return result_; }

 private:
  Result result_;
  std::vector<node> nodes_;
  std::atomic<std::size_t> remaining_;
};

}  // namespace detail

/// Future of all the given futures, returned (ready) in a tuple once every
/// one of them is ready. It never throws itself: get() on an element rethrows
/// that element's exception.
template <class... Fs>
auto when_all(Fs&&... fs) -> future<std::tuple<std::decay_t<Fs>...>> {
  using R = std::tuple<std::decay_t<Fs>...>;
  auto* s = new detail::when_all_state<R>(R(std::forward<Fs>(fs)...), sizeof...(Fs));
  s->add_ref();  // the future's reference
  std::apply(
      [&](auto&... f) {
        std::size_t i = 0;
        (s->watch(i++, detail::access<void>::get(f)), ...);
      },
      s->result());
  s->arrive();
  return detail::access<void>::template make<R>(s);
}

/// Range form: future of the vector of futures [first, last) (moved from).
template <class It>
auto when_all(It first, It last) -> future<std::vector<typename std::iterator_traits<It>::value_type>> {
  using F = typename std::iterator_traits<It>::value_type;
  using R = std::vector<F>;
  R v(std::make_move_iterator(first), std::make_move_iterator(last));
  auto* s = new detail::when_all_state<R>(std::move(v), static_cast<std::size_t>(std::distance(first, last)));
  s->add_ref();
  for (std::size_t i = 0; i < s->result().size(); ++i) s->watch(i, detail::access<void>::get(s->result()[i]));
  s->arrive();
  return detail::access<void>::template make<R>(s);
}
template <class F>
auto when_all(std::vector<F>&& v) {
  return when_all(v.begin(), v.end());
}
template <class F>
auto when_all(std::vector<F>& v) {
  return when_all(v.begin(), v.end());
}

// ---- dataflow ---------------------------------------------------------------

namespace detail {

/// One object per dataflow task: the result state, the task, the inputs and
/// one waiter per input (inline for up to 4 inputs). Runs when the last input
/// becomes ready, on the rank that created it.
template <class R, class Fn, class In>
class dataflow_task final : public state<R>, public task_base {
 public:
  struct node : waiter {
    dataflow_task* owner;
  };
  dataflow_task(Fn&& fn, std::vector<In>&& in, int thread)
      : state<R>([](state_base* s) { delete static_cast<dataflow_task*>(s); }, 2),
        fn_(std::move(fn)),
        in_(std::move(in)),
        remaining_(in_.size() + 1),
        home_(current_scheduler()),
        thread_(thread) {
    task_base::run = &run_it;
    task_base::tag = static_cast<state_base*>(this);
    if (in_.size() > inline_nodes) heap_nodes_.reset(new node[in_.size()]);
  }
  void arm() noexcept {
    node* nodes = heap_nodes_ ? heap_nodes_.get() : inline_;
    for (std::size_t i = 0; i < in_.size(); ++i) {
      nodes[i].owner = this;
      nodes[i].notify = [](waiter* w) noexcept { static_cast<node*>(w)->owner->arrive(true); };
      if (!access<void>::get(in_[i])->add_waiter(&nodes[i])) arrive(false);
    }
    arrive(false);
  }

 private:
  static constexpr std::size_t inline_nodes = 4;
  void arrive(bool from_notify) noexcept {
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (thread_ >= 0) {
      if (!from_notify || !hold_own_placed(home_, thread_, this)) spawn_on_thread(home_, thread_, this);
    } else if (from_notify)
      spawn_to(home_, this);
    else
      spawn(this);
  }
  static void run_it(task_base* t) noexcept {
    auto* self = static_cast<dataflow_task*>(t);
    auto call = [self]() -> decltype(auto) { return std::invoke(self->fn_, self->in_); };
    fulfil<R, decltype(call), own_placed_hold>(*self, call);
    // Dropping the inputs touches lines their producers' cores wrote:
    // done when this worker is idle, not before its next task.
    self->task_base::run = &clean_up;
    if (!defer_cleanup(self)) clean_up(self);
  }
  static void clean_up(task_base* t) noexcept {
    auto* self = static_cast<dataflow_task*>(t);
    self->in_.clear();
    self->release();
  }
  Fn fn_;
  std::vector<In> in_;
  std::atomic<std::size_t> remaining_;
  void* home_;
  int thread_;  // worker asked for (weft::on_thread), or -1
  node inline_[inline_nodes];
  std::unique_ptr<node[]> heap_nodes_;
};

/// Both dataflow forms: `thread` is the worker asked for, or -1 for none.
template <class F, class Fut>
auto make_dataflow(F&& f, std::vector<Fut>&& inputs, int thread) {
  using Fn = std::decay_t<F>;
  using R = std::invoke_result_t<Fn&, std::vector<Fut>&>;
  auto* t = new dataflow_task<R, Fn, Fut>(Fn(std::forward<F>(f)), std::move(inputs), thread);
  t->arm();
  return access<void>::template make<R>(t);
}

}  // namespace detail

/// Runs `f(inputs)` as a task once every future in `inputs` is ready (a
/// dataflow node); returns the future of its result. `inputs` is a vector of
/// future<T> or shared_future<T>, passed to `f` as `std::vector<...>&` (all
/// ready: get() on them does not block). One allocation per node.
template <class F, class Fut>
auto dataflow(F&& f, std::vector<Fut> inputs) {
  return detail::make_dataflow(std::forward<F>(f), std::move(inputs), -1);
}

/// dataflow with a placement hint: the node runs on worker thread
/// `where.index` of the rank that created it, unless that worker is busy
/// and another one is idle (see on_thread).
template <class F, class Fut>
auto dataflow(on_thread where, F&& f, std::vector<Fut> inputs) {
  return detail::make_dataflow(std::forward<F>(f), std::move(inputs), where.index);
}

// ---- fork-join --------------------------------------------------------------

/// Nested fork-join: run() spawns, wait() joins every task run so far
/// (including tasks that tasks of the group ran into it). The first exception
/// thrown by a task is rethrown by wait(). The destructor waits too.
class task_group {
 public:
  task_group() = default;
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;
  ~task_group() {
    try {
      wait();
    } catch (...) {
    }
  }

  template <class F>
  void run(F&& f) {
    pending_.fetch_add(1, std::memory_order_relaxed);
    detail::spawn(new item<std::decay_t<F>>(this, std::forward<F>(f)));
  }

  void wait();

 private:
  template <class F>
  struct item final : detail::task_base, detail::pooled {
    item(task_group* g, F&& f) : group(g), fn(std::move(f)) { init(); }
    item(task_group* g, const F& f) : group(g), fn(f) { init(); }
    void init() {
      run = &run_it;
      tag = group;
    }
    static void run_it(detail::task_base* t) noexcept {
      auto* self = static_cast<item*>(t);
      task_group* g = self->group;
      try {
        std::invoke(self->fn);
      } catch (...) {
        g->fail(std::current_exception());
      }
      delete self;
      g->finish_one();
    }
    task_group* group;
    F fn;
  };
  void fail(std::exception_ptr e) noexcept;
  void finish_one() noexcept {
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.set();
  }
  // One extra count held by the group itself until wait() drops it, so only
  // the task that finishes last after wait() began fires done_.
  std::atomic<long> pending_{1};
  detail::event done_;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

/// Calls f(i) for every i in [first, last), in parallel chunks of at most
/// `grain` indices (grain >= 1).
template <class I, class F>
void parallel_for(I first, I last, I grain, F&& f) {
  static_assert(std::is_integral_v<I>, "parallel_for takes an integral index range");
  if (!(first < last)) return;
  if (grain < 1) grain = 1;
  task_group g;
  auto split = [&g, grain, &f](auto& self, I lo, I hi) -> void {
    while (hi - lo > grain) {
      I mid = lo + (hi - lo) / 2;
      g.run([&self, mid, hi] { self(self, mid, hi); });
      hi = mid;
    }
    for (I i = lo; i < hi; ++i) f(i);
  };
  std::exception_ptr failed;
  try {
    split(split, first, last);
  } catch (...) {
    // Held, not rethrown with `throw;` after the wait: waiting may resume
    // this task on another thread, where no exception is active any more.
    failed = std::current_exception();
  }
  if (failed) {
    try {
      g.wait();  // tasks still refer to `split` and `f`: join before unwinding
    } catch (...) {
    }
    std::rethrow_exception(failed);
  }
  g.wait();
}

/// Reduces map(i) over [first, last) with `reduce` (associative), starting
/// each chunk from `identity`; chunks of at most `grain` indices.
template <class I, class T, class Map, class Reduce>
T parallel_reduce(I first, I last, I grain, T identity, Map&& map, Reduce&& reduce) {
  static_assert(std::is_integral_v<I>, "parallel_reduce takes an integral index range");
  if (grain < 1) grain = 1;
  struct rec {
    I grain;
    const T& identity;
    Map& map;
    Reduce& reduce;
    T operator()(I lo, I hi) const {
      if (hi - lo <= grain) {
        T acc = identity;
        for (I i = lo; i < hi; ++i) acc = reduce(std::move(acc), map(i));
        return acc;
      }
      I mid = lo + (hi - lo) / 2;
      auto right = weft::async([this, mid, hi] { return (*this)(mid, hi); });
      T left = (*this)(lo, mid);
      return reduce(std::move(left), right.get());
    }
  };
  if (!(first < last)) return identity;
  return rec{grain, identity, map, reduce}(first, last);
}

namespace this_task {
/// Lets other ready tasks of this worker run; resumes this task later.
void yield();
/// yield() only if another task is ready on this worker (its own queue,
/// tasks placed on it, or work injected into its rank); returns whether it
/// yielded. The check is a few loads, so a long-running background task (a
/// graph builder, a poller) can call it often: it gives way to real work at
/// once and otherwise runs while the worker would have been idle.
bool yield_if_others_ready();
}  // namespace this_task

}  // namespace weft
