// weft — dataflow: a task that runs once all its input futures are ready.
//
// @code
//   // given: weft::future<int> a, b;
//   auto c = weft::dataflow([](std::vector<weft::shared_future<int>>& in) {
//     return in[0].get() + in[1].get(); }, std::vector{a.share(), b.share()});
// @endcode
#pragma once
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/future.hpp"
#include "weft/placement.hpp"

namespace weft {

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

}  // namespace weft
