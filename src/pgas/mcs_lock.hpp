// Internal: global_lock as a queue lock on one-sided atomics (MCS: Mellor-
// Crummey and Scott's list-based queue lock), for jobs whose transport has
// one-sided operations and whose ranks do not all map each other's heaps.
// Every rank registers one region of lock words (one_sided_heap.hpp): the
// tail word of each lock it owns, by lock id, and its own queue nodes, one
// per acquisition in progress or held. A requester swaps a reference to its
// node into the lock's tail; if there was a predecessor it writes its
// reference into the predecessor's `next` word and spins on its own
// `locked` word, in its own memory. The holder releases by clearing the tail
// (compare-and-swap, when nobody queued) or by clearing its successor's
// `locked` word. The owner takes no part: no handler runs anywhere.
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/sched.hpp"

namespace weft::pgas::detail::mcs {

/// Locks a rank may create over its life (ids are not reused), and queue
/// nodes a rank may hold at once (acquisitions waiting or held).
inline constexpr std::size_t max_locks = std::size_t{1} << 16;
inline constexpr std::size_t max_nodes = 1024;
/// A node is a cache line: its `locked` word, then its `next` word.
inline constexpr std::size_t node_bytes = 64;
inline constexpr std::size_t region_bytes = max_locks * 8 + max_nodes * node_bytes;

inline constexpr std::size_t tail_offset(std::uint32_t id) noexcept { return std::size_t{id} * 8; }
inline constexpr std::size_t locked_offset(std::uint32_t node) noexcept {
  return max_locks * 8 + std::size_t{node} * node_bytes;
}
inline constexpr std::size_t next_offset(std::uint32_t node) noexcept { return locked_offset(node) + 8; }

/// A node named across ranks: (rank + 1) << 32 | node; 0 is none.
inline constexpr std::uint64_t node_ref(int rank, std::uint32_t node) noexcept {
  return (static_cast<std::uint64_t>(rank) + 1) << 32 | node;
}
inline constexpr int ref_rank(std::uint64_t ref) noexcept { return static_cast<int>(ref >> 32) - 1; }
inline constexpr std::uint32_t ref_node(std::uint64_t ref) noexcept { return static_cast<std::uint32_t>(ref); }

/// Forgets every rank's nodes (at start, for `local_ranks` ranks).
void reset(std::size_t local_ranks);

/// lock_acquire / lock_release / the owner's checks of locks.cpp.
future<bool> acquire(int owner, std::uint32_t id, bool try_only);
void release(int owner, std::uint32_t id);
void check_created(int owner, std::uint32_t id);
void check_destroy(int owner, std::uint32_t id);

}  // namespace weft::pgas::detail::mcs
