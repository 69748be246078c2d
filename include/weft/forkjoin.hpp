// weft — fork-join across ranks (Itoyori's programming model): nested
// parallelism whose tasks any rank may steal, over global memory.
//
// @code
//   long fib(int n) {
//     if (n < 2) return n;
//     auto [a, b] = weft::parallel_invoke([n] { return fib(n - 1); },
//                                         [n] { return fib(n - 2); });
//     return a + b;
//   }
//
//   int main(int argc, char** argv) {
//     return weft::run(argc, argv, [] {
//       long r = weft::root_exec(fib, 35);   // every rank calls it; rank 0 runs fib(35),
//       std::printf("%ld\n", r);             // all ranks steal its tasks; r on every rank
//     });
//   }
//
//   weft::global_future<long> f = weft::spawn(fib, 30);   // any task on any rank may f.get()
// @endcode
//
// A forked task may run on another rank than its parent (an idle rank steals
// the oldest task of a random victim, same node first). So a task's function
// and arguments must mean the same on every rank: they are checked at
// compile time to be trivially copyable and free of raw pointers and
// references (function pointers are fine). C++ cannot see a lambda's
// captures: capture numbers, weft::global_ptr and weft::global_span by value,
// never the address of a local variable ([&]); with --weft:forkjoin-checks
// (on in builds without NDEBUG) a fork whose captures hold an address on the
// forking task's stack ends the job with a message. Results are void or
// trivially copyable. Details and the coherence rules of checkouts at forks
// and joins: docs/FORKJOIN.md.
#pragma once
#include <cstdint>
#include <exception>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "weft/errors.hpp"
#include "weft/forkjoin/detail.hpp"
#include "weft/runtime.hpp"

namespace weft {

/// A spawned task's result, awaitable by any task on any rank (pass it into
/// other tasks by value; it is trivially copyable). get() may be called any
/// number of times, until the root_exec that spawned it returns.
template <class T>
class global_future {
 public:
  global_future() = default;
  /// (spawn makes them.)
  global_future(detail::fj::cell_tag, int owner, std::uint64_t cell, std::uint64_t slot) noexcept
      : owner_(owner), cell_(cell), slot_(slot) {}
  bool valid() const noexcept { return cell_ != 0; }
  /// The rank that spawned it (where its outcome is kept).
  int owner() const noexcept { return owner_; }
  /// Waits for the task (suspending this task only); rethrows its exception
  /// (as weft::remote_error naming the thrown type when it ran in another
  /// process).
  T get() const {
    if (cell_ == 0) throw future_error("weft: get() on an empty global_future");
    if constexpr (std::is_void_v<T>) {
      detail::fj::await_future(owner_, cell_, slot_, nullptr, 0);
    } else {
      alignas(T) unsigned char bytes[sizeof(T)];
      detail::fj::await_future(owner_, cell_, slot_, bytes, sizeof(T));
      return *std::launder(reinterpret_cast<T*>(bytes));
    }
  }

 private:
  int owner_ = -1;
  std::uint64_t cell_ = 0;
  std::uint64_t slot_ = detail::fj::no_outcome_slot;  // its outcome in the owner's heap, for other nodes
};

/// Runs f(args...) as a task that any rank may steal; returns its future.
/// Every spawned task must be awaited before the root_exec that spawned it
/// returns.
template <class F, class... A>
  requires std::is_invocable_v<std::decay_t<F>&, std::decay_t<A>&...>
auto spawn(F&& f, A&&... args) {
  auto p = detail::fj::make_packet(std::forward<F>(f), std::forward<A>(args)...);
  using P = decltype(p);
  using R = detail::fj::packet_result_t<P>;
  detail::fj::before_fork(&p, sizeof(P), "spawn");
  auto* c = new detail::fj::cell<R>();
  const std::uint64_t slot = detail::fj::adopt_future_cell(
      c, [](detail::fj::cell_base* b) { delete static_cast<detail::fj::cell<R>*>(b); });
  if (!detail::fj::push(&detail::fj::record_of<P>, &p, sizeof(P), c)) {
    detail::fj::run_here(p, *c);
    detail::fj::finish_here(*c);
  }
  return global_future<R>(detail::fj::cell_tag{}, weft::rank(),
                          static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(c)), slot);
}

namespace detail::fj {

template <class R>
using slot_t = std::conditional_t<std::is_void_v<R>, std::monostate, R>;

template <class R>
slot_t<R> take_slot(cell<R>& c) {
  if constexpr (std::is_void_v<R>) {
    c.take();
    return {};
  } else {
    return c.take();
  }
}

/// Queues task K of a parallel_invoke (not the first, which runs in place).
template <std::size_t K, class Packets, class Cells>
bool queue_one(Packets& packets, Cells& cells) {
  if constexpr (K == 0) {
    return false;
  } else {
    auto& p = std::get<K>(packets);
    using P = std::remove_reference_t<decltype(p)>;
    before_fork(&p, sizeof(P), "parallel_invoke");
    return push(&record_of<P>, &p, sizeof(P), &std::get<K>(cells));
  }
}

template <std::size_t K, class Packets, class Cells>
void settle_one(Packets& packets, Cells& cells, const bool* queued) {
  if constexpr (K > 0) {
    auto& c = std::get<K>(cells);
    if (!queued[K] || pop_if(&c)) run_here(std::get<K>(packets), c);
    else join(c, "parallel_invoke");
  }
}

template <class... P, std::size_t... I>
auto invoke_all(std::index_sequence<I...>, P&... p) {
  constexpr std::size_t n = sizeof...(P);
  std::tuple<cell<packet_result_t<P>>...> cells;
  auto packets = std::tie(p...);
  // Queued newest-last from the end, so the second is joined first and
  // thieves take the last (the largest part of a split, by convention).
  bool queued[n] = {};
  ((queued[n - 1 - I] = queue_one<n - 1 - I>(packets, cells)), ...);
  run_here(std::get<0>(packets), std::get<0>(cells));
  (settle_one<I>(packets, cells, queued), ...);
  return std::tuple<slot_t<packet_result_t<P>>...>{take_slot(std::get<I>(cells))...};
}

}  // namespace detail::fj

/// Runs every f concurrently (any rank may steal all but the first) and
/// returns their results as a tuple (std::monostate for void ones; nothing
/// when all are void). The first exception thrown, in argument order, is
/// rethrown after all have finished.
template <class... F>
  requires(sizeof...(F) >= 1)
auto parallel_invoke(F&&... f) {
  auto packets = std::make_tuple(detail::fj::make_packet(std::forward<F>(f))...);
  auto results = std::apply(
      [](auto&... p) { return detail::fj::invoke_all(std::index_sequence_for<F...>{}, p...); }, packets);
  if constexpr ((std::is_void_v<std::invoke_result_t<std::decay_t<F>&>> && ...))
    return;
  else
    return results;
}

/// Collective: every rank calls it with the same arguments; rank 0 runs
/// f(args...) as the root task of a computation that all ranks help with
/// (they steal its tasks until it ends), and every rank returns its result.
/// An exception thrown by the root task is rethrown on every rank (on the
/// others as weft::remote_error naming the thrown type). Call it from a
/// task (inside weft::run). Calls may follow each other without a barrier.
template <class F, class... A>
auto root_exec(F&& f, A&&... args) {
  auto p = detail::fj::make_packet(std::forward<F>(f), std::forward<A>(args)...);
  using R = detail::fj::packet_result_t<decltype(p)>;
  const std::uint64_t seq = detail::fj::root_begin();
  if (weft::rank() == 0) {
    detail::fj::cell<R> c;
    detail::fj::run_here(p, c);
    detail::fj::root_end(seq, c.value, c.value_size, c.error);
    return c.take();
  }
  if constexpr (std::is_void_v<R>) {
    detail::fj::root_wait(seq, nullptr, 0);
  } else {
    alignas(R) unsigned char bytes[sizeof(R)];
    detail::fj::root_wait(seq, bytes, sizeof(R));
    return *std::launder(reinterpret_cast<R*>(bytes));
  }
}

/// This rank's stealing since the start (or the last reset): tasks taken
/// from other ranks (through shared memory or by message), from sibling
/// workers of this rank, failed attempts, and the time spent in them.
struct steal_statistics {
  std::uint64_t from_node = 0;        // other ranks of this node, through shared memory
  std::uint64_t from_remote = 0;      // ranks of other nodes: by one-sided operations or by message
  std::uint64_t from_siblings = 0;    // other workers of this rank
  std::uint64_t failed = 0;           // attempts on another rank that found nothing
  std::uint64_t node_steal_ns = 0;    // time in successful shared-memory steals
  std::uint64_t failed_steal_ns = 0;  // time in failed ones (estimated from a sample)
  std::uint64_t remote_steal_ns = 0;  // successful ones of those: the attempt, or request to arrival by message
  std::uint64_t stolen() const noexcept { return from_node + from_remote; }
};

/// This rank's steal statistics; reset_steal_statistics zeroes them.
steal_statistics steal_stats();
void reset_steal_statistics();

}  // namespace weft

#include "weft/forkjoin/patterns.hpp"  // parallel_for_each, transform_reduce, parallel_sort
