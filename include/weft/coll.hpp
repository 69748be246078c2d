// weft — collectives across ranks: barrier, broadcast, reduce, allreduce,
// gather, allgather. Every rank must call the same collectives in the same
// order (as in MPI). Each comes in two forms: the plain name blocks (inside
// a task it suspends only that task) and returns the value; the `_async`
// name returns a future. Values are serialized like remote-call arguments.
// Reductions combine contributions in rank order (deterministic results for
// non-associative floating point), with a binary callable such as
// std::plus<>{} or a captureless lambda.
//
//   weft::barrier();
//   double total = weft::allreduce(local, std::plus<>{});
//   auto cfg = weft::broadcast(config, /*root=*/0);
//   std::vector<int> all = weft::allgather(weft::rank());
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "weft/detail/serialize.hpp"
#include "weft/runtime.hpp"
#include "weft/sched.hpp"

namespace weft {

namespace detail {

/// Number of the calling rank's next collective.
std::uint64_t collective_begin();
/// Sends `bytes` for step (seq, phase) to rank `dest`.
void collective_send(int dest, std::uint64_t seq, int phase, std::vector<std::byte>&& bytes);
/// Future of the messages of step (seq, phase), indexed by source rank, once
/// `count` of them have arrived on this rank.
future<std::vector<std::vector<std::byte>>> collective_expect(std::uint64_t seq, int phase, int count);

template <class T>
std::vector<std::byte> to_bytes(const T& v) {
  serialization::writer w(serialization::writer_options{~std::size_t{0}, 0});  // all inline
  w & v;
  return std::move(w).finish().bytes;
}
template <class T>
T from_bytes(const std::vector<std::byte>& b) {
  serialization::reader r(b);
  T v = r.template read<T>();
  r.expect_end();
  return v;
}
inline void check_root(int root) {
  if (root < 0 || root >= nranks())
    throw std::out_of_range("weft: collective root " + std::to_string(root) + " is not a rank");
}

}  // namespace detail

/// Every rank's `value` at `root`, in rank order (empty vector elsewhere).
template <class T>
future<std::vector<T>> gather_async(const T& value, int root = 0) {
  detail::check_root(root);
  const std::uint64_t seq = detail::collective_begin();
  const int me = rank(), n = nranks();
  if (me != root) {
    detail::collective_send(root, seq, 0, detail::to_bytes(value));
    return make_ready_future(std::vector<T>{});
  }
  return detail::collective_expect(seq, 0, n - 1).then([value, me, n](auto f) {
    auto parts = f.get();
    std::vector<T> out;
    out.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) out.push_back(r == me ? value : detail::from_bytes<T>(parts[r]));
    return out;
  });
}

/// `root`'s value on every rank.
template <class T>
future<T> broadcast_async(const T& value, int root = 0) {
  detail::check_root(root);
  const std::uint64_t seq = detail::collective_begin();
  const int me = rank(), n = nranks();
  if (me == root) {
    for (int r = 0; r < n; ++r)
      if (r != root) detail::collective_send(r, seq, 1, detail::to_bytes(value));
    return make_ready_future(T(value));
  }
  return detail::collective_expect(seq, 1, 1).then([root](auto f) { return detail::from_bytes<T>(f.get()[root]); });
}

/// op(...op(op(v0, v1), v2)..., v[n-1]) at `root`; `value` elsewhere.
template <class T, class Op>
future<T> reduce_async(const T& value, Op op, int root = 0) {
  return gather_async(value, root).then([op, root](future<std::vector<T>> f) mutable {
    std::vector<T> all = f.get();
    if (rank() != root) return T{};
    T acc = std::move(all[0]);
    for (std::size_t i = 1; i < all.size(); ++i) acc = op(std::move(acc), std::move(all[i]));
    return acc;
  });
}

/// The reduction of every rank's value, on every rank (reduce at rank 0, then
/// broadcast: the same bits everywhere).
template <class T, class Op>
future<T> allreduce_async(const T& value, Op op) {
  const std::uint64_t seq = detail::collective_begin();
  const int me = rank(), n = nranks();
  if (me != 0) {
    detail::collective_send(0, seq, 0, detail::to_bytes(value));
    return detail::collective_expect(seq, 1, 1).then([](auto f) { return detail::from_bytes<T>(f.get()[0]); });
  }
  return detail::collective_expect(seq, 0, n - 1).then([value, op, seq, n](auto f) mutable {
    auto parts = f.get();
    T acc = value;
    for (int r = 1; r < n; ++r) acc = op(std::move(acc), detail::from_bytes<T>(parts[r]));
    for (int r = 1; r < n; ++r) detail::collective_send(r, seq, 1, detail::to_bytes(acc));
    return acc;
  });
}

/// Every rank's value on every rank, in rank order.
template <class T>
future<std::vector<T>> allgather_async(const T& value) {
  const std::uint64_t seq = detail::collective_begin();
  const int me = rank(), n = nranks();
  if (me != 0) {
    detail::collective_send(0, seq, 0, detail::to_bytes(value));
    return detail::collective_expect(seq, 1, 1).then(
        [](auto f) { return detail::from_bytes<std::vector<T>>(f.get()[0]); });
  }
  return detail::collective_expect(seq, 0, n - 1).then([value, seq, n](auto f) {
    auto parts = f.get();
    std::vector<T> all;
    all.reserve(static_cast<std::size_t>(n));
    all.push_back(value);
    for (int r = 1; r < n; ++r) all.push_back(detail::from_bytes<T>(parts[r]));
    for (int r = 1; r < n; ++r) detail::collective_send(r, seq, 1, detail::to_bytes(all));
    return all;
  });
}

/// Completes once every rank has entered the barrier.
inline future<void> barrier_async() {
  return allreduce_async(char{0}, [](char a, char) { return a; }).then([](future<char> f) { f.get(); });
}

template <class T>
std::vector<T> gather(const T& value, int root = 0) { return gather_async(value, root).get(); }
template <class T>
T broadcast(const T& value, int root = 0) { return broadcast_async(value, root).get(); }
template <class T, class Op>
T reduce(const T& value, Op op, int root = 0) { return reduce_async(value, std::move(op), root).get(); }
template <class T, class Op>
T allreduce(const T& value, Op op) { return allreduce_async(value, std::move(op)).get(); }
template <class T>
std::vector<T> allgather(const T& value) { return allgather_async(value).get(); }
inline void barrier() { barrier_async().get(); }

}  // namespace weft
