// weft — fork-join inside a rank: task groups and parallel loops.
//
// @code
//   // given: void left(); void right(); long n; double a; std::vector<double> x, y;
//   weft::task_group g;                    // nested fork-join
//   g.run([] { left(); });  g.run([] { right(); });  g.wait();
//
//   weft::parallel_for(0L, n, 1024L, [&](long i) { y[i] += a * x[i]; });
// @endcode
#pragma once
#include <atomic>
#include <exception>
#include <functional>
#include <type_traits>
#include <utility>

#include "weft/async.hpp"
#include "weft/detail/future_state.hpp"
#include "weft/detail/task.hpp"

namespace weft {

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

}  // namespace weft
