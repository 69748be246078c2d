// weft offload — target tasks (OpenMP's `target nowait` with map and depend).
//
// @code
//   void saxpy(float a, std::span<const float> x, std::span<float> y) {
//     for (std::size_t i = 0; i < y.size(); ++i) y[i] += a * x[i];
//   }
//   // given: weft::device dev; std::vector<float> x, y;
//   auto f = weft::target(dev, saxpy, 2.0f, weft::map_to(x), weft::map_tofrom(y));
//   f.get();                                   // y holds the result
// @endcode
//
// The kernel is a plain function or a stateless lambda, the same on every
// rank (no registration). It runs on the device's rank and receives, in the
// order of the arguments:
//   map clause of T         -> std::span<T> of the device's copy
//   weft::device_buffer<T>  -> std::span<T> of that device memory; a buffer of
//                              another device (any rank) arrives as a copy made
//                              for this task, fetched by the device's rank
//                              straight from the buffer's rank
//   std::vector<device_buffer<T>>   -> std::vector<std::span<T>>, the same way
//   future / shared_future  -> nothing: a dependency (depend); the kernel
//   std::vector<shared_future<void>>   starts once it is ready; its error
//                              fails the task
//   anything else           -> the value (serialized like async_at's arguments)
// The kernel returns void (one that returns a value does not compile):
// results go back through map_from/map_tofrom ranges or device buffers.
// A range present on the device (target_enter_data) is used in place: no
// copy unless `.always()` is given; the task holds a reference on it until
// it ends, so an exit or a map_delete meanwhile frees nothing, and if the
// task drops the last reference it copies the range back (map_from/tofrom)
// and frees it. Other mapped ranges live on the device for this task only.
// Host ranges must stay valid until the future is ready.
//
// On the device's rank the copies go through the device's transfer queue and
// the kernel through its kernel queue, so a long kernel does not hold up
// another task's copies. Errors (no such device, a buffer of no device,
// a map overlapping a present range of another extent, a throwing kernel)
// reach the returned future, naming the device and its rank.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/am.hpp"
#include "weft/future.hpp"
#include "weft/offload/device.hpp"
#include "weft/offload/device_buffer.hpp"
#include "weft/offload/kernel_ref.hpp"
#include "weft/offload/launch.hpp"
#include "weft/offload/map.hpp"
#include "weft/when_all.hpp"

namespace weft {

namespace detail {

// ---- the caller's side ------------------------------------------------------------

template <class T> struct is_any_future : std::false_type {};
template <class T> struct is_any_future<future<T>> : std::true_type {};
template <class T> struct is_any_future<shared_future<T>> : std::true_type {};
template <class T> struct is_future_list : std::false_type {};
template <> struct is_future_list<std::vector<shared_future<void>>> : std::true_type {};
template <class T> struct is_plain_future : std::false_type {};
template <class T> struct is_plain_future<future<T>> : std::true_type {};

/// A map clause with its present-table entry (null: mapped for this task).
template <class T>
struct map_plan {
  map_clause<T> clause;
  present_ref entry;
};

template <class T>
map_wire<T> wire_of(const map_plan<T>& p) {
  map_wire<T> w;
  w.count = p.clause.count;
  const bool temporary = p.entry == nullptr;
  if (!temporary) w.address = p.entry->address.load(std::memory_order_acquire);
  if (p.clause.copies_in() && (temporary || p.clause.always_copy)) {
    const auto* b = reinterpret_cast<const std::byte*>(p.clause.data);
    w.data.assign(b, b + p.clause.bytes());
  }
  if (p.clause.copies_out() && (temporary || p.clause.always_copy)) w.flags |= wire_copy_out;
  return w;
}
template <class P>
const P& wire_of(const P& p) {
  return p;
}

/// Whether the launch carries bytes of this host range (read when it leaves).
template <class T>
bool reads_host(const map_plan<T>& p) {
  return p.clause.copies_in() && (p.entry == nullptr || p.clause.always_copy);
}
template <class P>
bool reads_host(const P&) {
  return false;
}

/// Collects a target task's dependencies and present-table references while
/// its arguments are sorted; the first error wins.
struct target_builder {
  int device;
  std::vector<shared_future<void>> deps;
  std::vector<present_ref> entries;
  std::exception_ptr error;

  void fail(std::exception_ptr e) {
    if (!error) error = std::move(e);
  }
  /// Checks that a device_buffer argument names a device that exists.
  void check_buffer(int buffer_device);
  /// Drops the references taken so far.
  void release_entries() noexcept;

  template <class T>
  map_plan<T> plan(const map_clause<T>& c) {
    map_plan<T> p{c, nullptr};
    if (c.kind == map_kind::release || c.kind == map_kind::remove) {
      fail(std::make_exception_ptr(std::invalid_argument("weft offload: map_release/map_delete belong to target_exit_data")));
      return p;
    }
    try {
      p.entry = present_acquire(device, c.data, c.bytes());
    } catch (...) {
      fail(std::current_exception());
    }
    if (p.entry) {
      entries.push_back(p.entry);
      deps.push_back(p.entry->ready);
    }
    return p;
  }

  template <class A>
  auto sort(A&& a) {
    using D = std::decay_t<A>;
    if constexpr (is_any_future<D>::value) {
      static_assert(!std::is_lvalue_reference_v<A> || !is_plain_future<D>::value,
                    "weft::target: pass a future as std::move(f) (or pass a shared_future)");
      deps.push_back(to_void(std::forward<A>(a)));
      return std::tuple<>{};
    } else if constexpr (is_future_list<D>::value) {
      deps.insert(deps.end(), a.begin(), a.end());
      return std::tuple<>{};
    } else if constexpr (is_map_clause<D>::value) {
      return std::tuple{plan(a)};
    } else if constexpr (is_device_buffer<D>::value) {
      check_buffer(a.device_id);
      return std::tuple<D>{a};
    } else if constexpr (is_buffer_list<D>::value) {
      for (const auto& x : a) check_buffer(x.device_id);
      return std::tuple<D>{std::forward<A>(a)};
    } else {
      return std::tuple<D>{std::forward<A>(a)};
    }
  }

 private:
  template <class F>
  static shared_future<void> to_void(F&& f) {
    using D = std::decay_t<F>;
    if constexpr (std::is_same_v<D, future<void>>) return std::move(f).share();
    else if constexpr (std::is_same_v<D, shared_future<void>>) return f;
    else return f.then([](auto g) { g.get(); }).share();
  }
};

/// Copies a reply's bytes back into the host ranges that asked for them.
template <class T>
void copy_back(const map_plan<T>& p, const std::vector<std::vector<std::byte>>& outs, std::size_t& next) {
  if (!(p.clause.copies_out() && (p.entry == nullptr || p.clause.always_copy))) return;
  const auto& b = outs.at(next++);
  if (b.size() != p.clause.bytes()) throw protocol_error("weft offload: copied-out size mismatch");
  if (!b.empty()) std::memcpy(p.clause.data, b.data(), b.size());
}
template <class P>
void copy_back(const P&, const std::vector<std::vector<std::byte>>&, std::size_t&) {}

/// Drops the task's hold on a present range. The task that drops a range's
/// last reference copies it back when its clause says so and its kernel ran
/// (`ran`), then frees it; that work's future joins `pending`.
template <class T>
void release_hold(const map_plan<T>& p, bool ran, std::vector<future<void>>& pending) {
  if (p.entry == nullptr) return;
  future<void> f = present_release(p.entry, ran && p.clause.copies_out() ? p.clause.data : nullptr);
  if (!f.is_ready()) pending.push_back(std::move(f));
}
template <class P>
void release_hold(const P&, bool, std::vector<future<void>>&) {}

// ---- dependencies resolved on the devices' ranks (src/offload/launch_records.cpp)
//
// While a target task is in flight, its launcher keeps a record of it, found
// by its future. A later target task that depends on it is launched at once,
// naming it (remote_dependency): the consumer's device rank waits for it
// where it runs, and fetches the producer's output from there as soon as it
// is done, without a round trip through the launcher.

struct launch_record;

/// The record of the in-flight target task whose future's state is
/// `state`; null for any other future.
std::shared_ptr<launch_record> launch_record_of(const void* state);
/// Names `r`'s task in `after` and counts one more consumer of it (call it
/// once per task: one launch arrives once); false (nothing done) once the
/// task has ended.
bool depend_on(launch_record& r, std::vector<remote_dependency>& after);
/// Makes the record of a task about to be launched: sets `h.task` and hands
/// `h` the consumer counts waiting for the device's rank.
std::shared_ptr<launch_record> begin_launch(const void* state, const device& d, launch_header& h);
/// The task ended (its reply came, or it failed); `not_sent`: its launch
/// never left, so the device's rank must fail those waiting for it.
void end_launch(launch_record& r, const char* not_sent = nullptr) noexcept;
/// The arrivals a launch that will not be sent owes its dependencies.
void abandon_dependencies(const std::vector<remote_dependency>& after) noexcept;
/// Diagnostics (tests): launches this process sent naming a dependency for
/// the device's rank to wait for; records of tasks held by the calling rank;
/// sending the consumer counts this process still holds (else they wait for
/// later launches, and up to a few dozen records per launching process stay
/// on each device's rank).
std::uint64_t launches_with_device_dependencies() noexcept;
std::size_t task_records_here();
void send_consumer_counts_now();

/// One target task in flight on the caller's side. It holds a reference on
/// every present range it maps from its creation until its end, so that
/// neither target_exit_data nor map_delete frees them while it runs.
template <class K, class Plans>
struct target_op : std::enable_shared_from_this<target_op<K, Plans>> {
  target_op(device d, std::uint64_t code, Plans&& p) : dev(d), kernel(code), plans(std::move(p)) {}
  device dev;
  std::uint64_t kernel;
  Plans plans;
  bool holding = true;  // the present ranges' holds are not yet released
  promise<void> done;
  const void* key = nullptr;  // the state of done's future
  /// Target tasks in flight when this one was made, with their futures.
  std::vector<std::pair<std::shared_ptr<launch_record>, shared_future<void>>> producers;
  std::shared_ptr<launch_record> record;  // while launched

  void launch() {
    launch_header h;
    h.device = dev.id();
    h.kernel = kernel;
    // Producers that ended meanwhile are plain dependencies: ready or about
    // to be (their launcher ends the record just before the future).
    std::exception_ptr failed;
    for (auto& [r, f] : std::exchange(producers, {})) {
      if (depend_on(*r, h.after)) continue;
      try {
        f.get();
      } catch (...) {
        if (!failed) failed = std::current_exception();
      }
    }
    if (failed) {
      abandon_dependencies(h.after);
      fail(failed);
      return;
    }
    record = begin_launch(key, dev, h);
    try {
      auto replies = std::apply(
          [&](const auto&... p) {
            return async_at(dev.rank(), launch_on_device<K, std::decay_t<decltype(wire_of(p))>...>{}, h,
                            wire_of(p)...);
          },
          plans);
      replies.then([self = this->shared_from_this()](future<std::vector<std::vector<std::byte>>> r) {
        self->finish(std::move(r));
      });
    } catch (const std::exception& e) {
      end_launch(*std::exchange(record, nullptr), e.what());
      abandon_dependencies(h.after);
      fail(std::current_exception());
    } catch (...) {
      end_launch(*std::exchange(record, nullptr), "the launch could not be sent");
      abandon_dependencies(h.after);
      fail(std::current_exception());
    }
  }
  void finish(future<std::vector<std::vector<std::byte>>>&& r) {
    try {
      const auto outs = r.get();
      std::size_t next = 0;
      std::apply([&](const auto&... p) { (copy_back(p, outs, next), ...); }, plans);
    } catch (...) {
      fail(std::current_exception());
      return;
    }
    complete(release(true), nullptr);
  }
  void fail(std::exception_ptr e) { complete(release(false), std::move(e)); }

 private:
  /// The copies back and frees of the ranges this task held last.
  std::vector<future<void>> release(bool ran) {
    std::vector<future<void>> pending;
    if (std::exchange(holding, false))
      std::apply([&](const auto&... p) { (release_hold(p, ran, pending), ...); }, plans);
    return pending;
  }
  /// Ends the task once `pending` is done: with `error` if set, else with
  /// the first error of `pending`.
  void complete(std::vector<future<void>>&& pending, std::exception_ptr error) {
    if (pending.empty()) {
      settle(std::move(error));
      return;
    }
    join_all(std::move(pending)).then([self = this->shared_from_this(), error](future<void> f) mutable {
      try {
        f.get();
      } catch (...) {
        if (!error) error = std::current_exception();
      }
      self->settle(std::move(error));
    });
  }
  /// The record ends just before the future (launch() counts on that).
  void settle(std::exception_ptr error) {
    if (record) end_launch(*std::exchange(record, nullptr));
    if (error) done.set_exception(std::move(error));
    else done.set_value();
  }
};

/// Runs `op` once every dependency is ready (at once when there are none);
/// a failed dependency fails the task.
template <class Op>
void launch_after(std::shared_ptr<Op> op, std::vector<shared_future<void>>&& deps) {
  if (deps.empty()) {
    op->launch();
    return;
  }
  when_all(std::move(deps)).then([op](future<std::vector<shared_future<void>>> all) {
    auto v = all.get();
    for (auto& f : v) {
      try {
        f.get();
      } catch (...) {
        op->fail(std::current_exception());
        return;
      }
    }
    op->launch();
  });
}

std::exception_ptr device_error(int device);

}  // namespace detail

/// Runs `kernel(args...)` on device `d` as a target task; see above.
template <class K, class... A>
future<void> target(const device& d, K&& kernel, A&&... args) {
  using Kd = std::decay_t<K>;
  static_assert(detail::kernel_callable_ok_v<Kd>,
                "weft::target: the kernel must be a plain function or a stateless lambda (no captures); "
                "pass state as arguments");
  if (auto e = detail::device_error(d.id())) return make_exceptional_future<void>(e);
  std::uint64_t code = 0;
  try {
    code = detail::encode_kernel<Kd>(kernel);
  } catch (...) {
    return make_exceptional_future<void>(std::current_exception());
  }
  detail::target_builder b{d.id(), {}, {}, nullptr};
  auto plans = std::tuple_cat(b.sort(std::forward<A>(args))...);
  if (b.error) {
    b.release_entries();
    return make_exceptional_future<void>(b.error);
  }
  using Op = detail::target_op<Kd, decltype(plans)>;
  auto op = std::make_shared<Op>(d, code, std::move(plans));
  auto result = op->done.get_future();
  op->key = detail::access<void>::get(result);
  // Target tasks still in flight are waited for on the device's rank; the
  // caller waits for the other dependencies before it launches. A launch
  // that carries host bytes waits for all of them here: a producer may
  // still copy its results into those bytes.
  const bool carries_host_bytes = std::apply([](const auto&... p) { return (detail::reads_host(p) || ...); }, op->plans);
  std::vector<shared_future<void>> here;
  for (auto& f : b.deps) {
    if (!carries_host_bytes)
      if (auto r = detail::launch_record_of(detail::access<void>::get(f))) {
        op->producers.emplace_back(std::move(r), f);
        continue;
      }
    here.push_back(std::move(f));
  }
  // A producer named twice is one dependency (its record counts launches).
  std::sort(op->producers.begin(), op->producers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  op->producers.erase(std::unique(op->producers.begin(), op->producers.end(),
                                  [](const auto& a, const auto& b) { return a.first == b.first; }),
                      op->producers.end());
  detail::launch_after(std::move(op), std::move(here));
  return result;
}

namespace detail {
/// Applies a data directive to every range; one future for all.
template <class Directive, class... T>
future<void> each_range(const device& d, Directive directive, const map_clause<T>&... maps) {
  if (auto e = device_error(d.id())) return make_exceptional_future<void>(e);
  std::vector<future<void>> all;
  (all.push_back(directive(d.id(), maps.data, maps.bytes(), maps.kind, maps.always_copy)), ...);
  return join_all(std::move(all));
}
}  // namespace detail

/// OpenMP's `target enter data`: makes each range present on `d` (map_to
/// copies it there, map_alloc does not); a present range gains a reference
/// and is copied only with `.always()`.
template <class... T>
future<void> target_enter_data(const device& d, const map_clause<T>&... maps) {
  return detail::each_range(d, &detail::enter_range, maps...);
}

/// OpenMP's `target exit data`: drops a reference to each range (map_delete:
/// all of them); at zero, map_from copies the range back and the device
/// memory is freed. `.always()` copies back in any case.
template <class... T>
future<void> target_exit_data(const device& d, const map_clause<T>&... maps) {
  return detail::each_range(d, &detail::exit_range, maps...);
}

/// OpenMP's `target update`: map_to(x) copies the present range host ->
/// device, map_from(x) device -> host; a range that is not present is
/// skipped (as OpenMP does).
template <class... T>
future<void> target_update(const device& d, const map_clause<T>&... maps) {
  return detail::each_range(d, &detail::update_range, maps...);
}

}  // namespace weft
