// weft — reductions: reduce, allreduce, exclusive_scan. Internal to
// <weft/coll.hpp>, which documents the combining order.
#pragma once
#include <optional>
#include <type_traits>
#include <utility>

#include "weft/coll/detail.hpp"

namespace weft {

template <class Op>
struct elementwise;

namespace detail {

template <class Op>
inline constexpr bool is_elementwise_v = false;
template <class Op>
inline constexpr bool is_elementwise_v<elementwise<Op>> = true;

/// Recursive doubling over a pow2_group: log2(p) exchanges of the whole
/// value (plus the fold and unfold messages when n is not a power of two).
template <class T, class Op>
T allreduce_steps(std::uint64_t seq, T acc, Op op) {
  const int me = rank();
  const pow2_group g(nranks());
  if (g.folded_away(me)) {
    collective_send(me - 1, seq, phase_fold, to_bytes(acc));
    return from_bytes<T>(collective_recv(seq, phase_unfold, me - 1));
  }
  if (g.absorbs(me)) acc = op(std::move(acc), from_bytes<T>(collective_recv(seq, phase_fold, me + 1)));
  const int m = g.member(me);
  for (int d = 1, k = 0; d < g.p; d <<= 1, ++k) {
    const int partner = g.rank_of(m ^ d);
    collective_send(partner, seq, phase_step + k, to_bytes(acc));
    T other = from_bytes<T>(collective_recv(seq, phase_step + k, partner));
    acc = (m & d) != 0 ? op(std::move(other), std::move(acc)) : op(std::move(acc), std::move(other));
  }
  if (g.absorbs(me)) collective_send(me + 1, seq, phase_unfold, to_bytes(acc));
  return acc;
}

/// The same bracketing as allreduce_steps, as a binomial tree to rank 0
/// (then forwarded to the root).
template <class T, class Op>
T reduce_steps(std::uint64_t seq, T acc, Op op, int root) {
  const int me = rank();
  const pow2_group g(nranks());
  if (g.folded_away(me)) {
    collective_send(me - 1, seq, phase_fold, to_bytes(acc));
  } else {
    if (g.absorbs(me)) acc = op(std::move(acc), from_bytes<T>(collective_recv(seq, phase_fold, me + 1)));
    const int m = g.member(me);
    for (int d = 1, k = 0; d < g.p; d <<= 1, ++k) {
      if ((m & d) != 0) {
        collective_send(g.rank_of(m - d), seq, phase_step + k, to_bytes(acc));
        break;
      }
      acc = op(std::move(acc), from_bytes<T>(collective_recv(seq, phase_step + k, g.rank_of(m + d))));
    }
  }
  if (me == 0 && root == 0) return acc;
  if (me == 0) collective_send(root, seq, phase_result, to_bytes(acc));
  if (me == root) return from_bytes<T>(collective_recv(seq, phase_result, 0));
  return T{};
}

/// Recursive doubling: after step d, `partial` is the reduction of this
/// rank's aligned block of 2d ranks; what came from lower partners is
/// prepended to `prefix`.
template <class T, class Op>
T exclusive_scan_steps(std::uint64_t seq, T value, T init, Op op) {
  const int me = rank(), n = nranks();
  T partial = std::move(value);
  std::optional<T> prefix;
  for (int d = 1, k = 0; d < n; d <<= 1, ++k) {
    const int partner = me ^ d;
    if (partner >= n) continue;
    collective_send(partner, seq, phase_step + k, to_bytes(partial));
    T other = from_bytes<T>(collective_recv(seq, phase_step + k, partner));
    if (partner < me) {
      prefix = prefix ? op(T(other), std::move(*prefix)) : T(other);
      partial = op(std::move(other), std::move(partial));
    } else {
      partial = op(std::move(partial), std::move(other));
    }
  }
  return prefix ? op(std::move(init), std::move(*prefix)) : init;
}

}  // namespace detail

/// op(...) of every rank's value at `root` (T{} elsewhere).
template <class T, class Op>
T reduce(const T& value, Op op, int root = 0) {
  detail::check_root(root);
  return detail::reduce_steps<T, Op>(detail::collective_begin(), value, std::move(op), root);
}
template <class T, class Op>
future<T> reduce_async(const T& value, Op op, int root = 0) {
  detail::check_root(root);
  return async(detail::reduce_steps<T, Op>, detail::collective_begin(), value, std::move(op), root);
}

/// The reduction of every rank's value, on every rank (the same bits).
template <class T, class Op>
  requires(!detail::is_elementwise_v<Op>)
T allreduce(const T& value, Op op) {
  return detail::allreduce_steps<T, Op>(detail::collective_begin(), value, std::move(op));
}
template <class T, class Op>
  requires(!detail::is_elementwise_v<Op>)
future<T> allreduce_async(const T& value, Op op) {
  return async(detail::allreduce_steps<T, Op>, detail::collective_begin(), value, std::move(op));
}

/// On rank r: op(init, v0 ⊕ ... ⊕ v[r-1]) (init on rank 0), like
/// std::exclusive_scan.
template <class T, class Op>
T exclusive_scan(const T& value, const T& init, Op op) {
  return detail::exclusive_scan_steps<T, Op>(detail::collective_begin(), value, init, std::move(op));
}
template <class T, class Op>
future<T> exclusive_scan_async(const T& value, const T& init, Op op) {
  return async(detail::exclusive_scan_steps<T, Op>, detail::collective_begin(), value, init, std::move(op));
}

}  // namespace weft
