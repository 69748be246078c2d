// weft — barrier, and the rooted collectives on binomial trees: broadcast,
// gather, scatter. Internal to <weft/coll.hpp>.
#pragma once
#include <utility>
#include <vector>

#include "weft/coll/detail.hpp"

namespace weft {

namespace detail {

/// Dissemination: at step d every rank signals rank + d and waits for
/// rank - d (mod n); after ceil(log2 n) steps each has heard from all.
inline void barrier_steps(std::uint64_t seq) {
  const int me = rank(), n = nranks();
  for (int d = 1, k = 0; d < n; d <<= 1, ++k) {
    collective_send((me + d) % n, seq, phase_step + k, {});
    collective_recv(seq, phase_step + k, (me - d + n) % n);
  }
}

template <class T>
T broadcast_steps(std::uint64_t seq, T value, int root) {
  const binomial_tree t(nranks(), root, rank());
  std::vector<std::byte> bytes = t.v == 0 ? to_bytes(value) : collective_recv(seq, phase_step, t.parent());
  for (int d = t.span() >> 1; d > 0; d >>= 1)
    if (t.v + d < t.n) collective_send(t.real(t.v + d), seq, phase_step, std::vector<std::byte>(bytes));
  return t.v == 0 ? std::move(value) : from_bytes<T>(bytes);
}

/// Each subtree's values travel up as one block, in virtual rank order.
template <class T>
std::vector<T> gather_steps(std::uint64_t seq, T value, int root) {
  const binomial_tree t(nranks(), root, rank());
  std::vector<std::byte> block;
  append_value(block, value);
  // A child at distance d sends at phase_step + log2(d): the phases tell
  // the children apart.
  for (int d = 1; d < t.span() && t.v + d < t.n; d <<= 1) {
    const std::vector<std::byte> child = collective_recv(seq, phase_step + level(d), t.real(t.v + d));
    block.insert(block.end(), child.begin(), child.end());
  }
  if (t.v != 0) {
    collective_send(t.parent(), seq, phase_step + level(t.span()), std::move(block));
    return {};
  }
  const auto parts = split_parts(block, static_cast<std::size_t>(t.n));
  std::vector<T> out(static_cast<std::size_t>(t.n));
  out[static_cast<std::size_t>(root)] = std::move(value);
  for (int i = 1; i < t.n; ++i) out[static_cast<std::size_t>(t.real(i))] = from_bytes<T>(parts[static_cast<std::size_t>(i)]);
  return out;
}

/// The root's values travel down, each subtree's as one block.
template <class T>
T scatter_steps(std::uint64_t seq, std::vector<T> values, int root) {
  const binomial_tree t(nranks(), root, rank());
  std::vector<std::byte> block;
  if (t.v == 0) {
    for (int i = 0; i < t.n; ++i) append_value(block, values[static_cast<std::size_t>(t.real(i))]);
  } else {
    block = collective_recv(seq, phase_step, t.parent());
  }
  const auto parts = split_parts(block, static_cast<std::size_t>(t.size()));
  for (int d = t.span() >> 1; d > 0; d >>= 1)
    if (t.v + d < t.n)
      collective_send(t.real(t.v + d), seq, phase_step,
                      sub_block(parts, static_cast<std::size_t>(d), static_cast<std::size_t>(std::min(d, t.n - t.v - d))));
  if (t.v == 0) return std::move(values[static_cast<std::size_t>(root)]);
  return from_bytes<T>(parts[0]);
}

inline void check_scatter_values(std::size_t count, int root) {
  if (rank() == root && count != static_cast<std::size_t>(nranks()))
    collective_error("scatter at root " + std::to_string(root) + " needs one value per rank (" +
                     std::to_string(nranks()) + "), got " + std::to_string(count));
}

}  // namespace detail

/// Completes once every rank has entered the barrier.
inline void barrier() { detail::barrier_steps(detail::collective_begin()); }
inline future<void> barrier_async() { return async(detail::barrier_steps, detail::collective_begin()); }

/// `root`'s value on every rank.
template <class T>
T broadcast(const T& value, int root = 0) {
  detail::check_root(root);
  return detail::broadcast_steps<T>(detail::collective_begin(), value, root);
}
template <class T>
future<T> broadcast_async(const T& value, int root = 0) {
  detail::check_root(root);
  return async(detail::broadcast_steps<T>, detail::collective_begin(), value, root);
}

/// Every rank's `value` at `root`, in rank order (empty vector elsewhere).
template <class T>
std::vector<T> gather(const T& value, int root = 0) {
  detail::check_root(root);
  return detail::gather_steps<T>(detail::collective_begin(), value, root);
}
template <class T>
future<std::vector<T>> gather_async(const T& value, int root = 0) {
  detail::check_root(root);
  return async(detail::gather_steps<T>, detail::collective_begin(), value, root);
}

/// values[r] of `root` on rank r. Only the root's `values` are read; it
/// must hold one value per rank.
template <class T>
T scatter(std::vector<T> values, int root = 0) {
  detail::check_root(root);
  detail::check_scatter_values(values.size(), root);
  return detail::scatter_steps<T>(detail::collective_begin(), std::move(values), root);
}
template <class T>
future<T> scatter_async(std::vector<T> values, int root = 0) {
  detail::check_root(root);
  detail::check_scatter_values(values.size(), root);
  return async(detail::scatter_steps<T>, detail::collective_begin(), std::move(values), root);
}

}  // namespace weft
