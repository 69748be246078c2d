// weft — async: run a function as a new task of this rank.
//
// @code
//   int work(int x) { return x + 1; }
//   weft::future<int> f = weft::async([] { return 6 * 7; });
//   auto g = weft::async(weft::on_thread{2}, work, 17);   // placed on worker 2
// @endcode
#pragma once
#include <functional>
#include <type_traits>
#include <utility>

#include "weft/future.hpp"
#include "weft/placement.hpp"

namespace weft {

namespace detail {

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

}  // namespace detail

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

}  // namespace weft
