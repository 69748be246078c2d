// weft — futures and promises: values that become available later.
//
// @code
//   weft::promise<int> p;
//   weft::future<int> f = p.get_future();
//   auto g = f.then([](weft::future<int> v) { return v.get() + 1; });
//   p.set_value(41);
//   int v = g.get();                       // 42; suspends this task, not the worker
// @endcode
//
// get() called from inside a task suspends that task's fiber and lets the
// worker run other work; called from a plain thread it blocks the thread.
// An exception stored in the state is rethrown by get().
#pragma once
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/detail/future_state.hpp"
#include "weft/detail/task.hpp"
#include "weft/errors.hpp"

namespace weft {

template <class T> class future;
template <class T> class shared_future;
template <class T> class promise;

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

}  // namespace weft
