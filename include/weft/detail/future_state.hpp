// Internal: the shared state behind weft::future / promise / shared_future.
// One atomic word holds both readiness and an intrusive list of waiters, so
// "is it ready?" is one load and "wake everyone" is one exchange.
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <new>
#include <utility>

#include "weft/detail/task.hpp"
#include "weft/detail/task_alloc.hpp"

namespace weft::detail {

/// Something parked on a state: a suspended fiber, a blocked thread, a
/// continuation, a when_all counter. `notify` is called exactly once, after
/// which the state never touches the node again.
struct waiter {
  waiter* next = nullptr;
  void (*notify)(waiter*) noexcept = nullptr;
};

/// A list of waiters that fires once (futures, task_group completion).
class event {
 public:
  static constexpr std::uintptr_t fired = 1;

  bool is_set() const noexcept { return head_.load(std::memory_order_acquire) == fired; }

  /// Adds `w`; returns false (and leaves `w` alone) if the event already fired.
  bool add(waiter* w) noexcept {
    std::uintptr_t h = head_.load(std::memory_order_acquire);
    do {
      if (h == fired) return false;
      w->next = reinterpret_cast<waiter*>(h);
    } while (!head_.compare_exchange_weak(h, reinterpret_cast<std::uintptr_t>(w),
                                          std::memory_order_acq_rel, std::memory_order_acquire));
    return true;
  }

  void set() noexcept {
    std::uintptr_t h = head_.exchange(fired, std::memory_order_acq_rel);
    for (auto* w = reinterpret_cast<waiter*>(h); w != nullptr;) {
      waiter* n = w->next;  // read before notify: the node may vanish
      w->notify(w);
      w = n;
    }
  }

  void reset() noexcept { head_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<std::uintptr_t> head_{0};
};

/// Blocks the caller until `e` fires: suspends the fiber on a worker,
/// blocks the thread elsewhere. `tag` lets the waiter run its own producer
/// inline first (see try_run_inline). With nothing else queued on the
/// worker it first polls a few rounds for a quick answer; `spin` false
/// skips that (the caller knows other work is waiting elsewhere).
void wait_for(event& e, const void* tag, bool spin = true) noexcept;

class state_base : public pooled {
 public:
  state_base(const state_base&) = delete;
  state_base& operator=(const state_base&) = delete;

  bool ready() const noexcept { return done_.is_set(); }
  void wait() noexcept {
    if (!done_.is_set()) wait_for(done_, this);
  }
  bool add_waiter(waiter* w) noexcept { return done_.add(w); }

  void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_(this);
  }

  void set_exception(std::exception_ptr e) noexcept {
    error_ = std::move(e);
    done_.set();
  }
  bool has_exception() const noexcept { return static_cast<bool>(error_); }
  void rethrow_if_error() const {
    if (error_) std::rethrow_exception(error_);
  }

 protected:
  explicit state_base(void (*destroy)(state_base*), int refs) noexcept
      : refs_(refs), destroy_(destroy) {}
  ~state_base() = default;
  void mark_ready() noexcept { done_.set(); }

 private:
  event done_;
  std::atomic<int> refs_;
  void (*destroy_)(state_base*);
  std::exception_ptr error_;
};

/// Value storage: constructed only on set_value, destroyed with the state.
template <class T>
class state : public state_base {
 public:
  using state_base::state_base;
  ~state() {
    if (has_value_) std::launder(reinterpret_cast<T*>(&storage_))->~T();
  }
  template <class... A>
  void set_value(A&&... a) {
    ::new (static_cast<void*>(&storage_)) T(std::forward<A>(a)...);
    has_value_ = true;
    mark_ready();
  }
  T& value() {
    rethrow_if_error();
    return *std::launder(reinterpret_cast<T*>(&storage_));
  }

 private:
  alignas(T) unsigned char storage_[sizeof(T)];
  bool has_value_ = false;
};

template <>
class state<void> : public state_base {
 public:
  using state_base::state_base;
  void set_value() noexcept { mark_ready(); }
  void value() { rethrow_if_error(); }
};

/// A heap state whose only owners are futures/promises (no attached task).
template <class T>
class plain_state final : public state<T> {
 public:
  explicit plain_state(int refs)
      : state<T>([](state_base* s) { delete static_cast<plain_state*>(s); }, refs) {}
};

}  // namespace weft::detail
