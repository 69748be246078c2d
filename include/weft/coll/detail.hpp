// weft — what the collective algorithms are built from: three messaging
// primitives (implemented in src/coll/collectives.cpp), value (de)coding
// and the rank groupings the trees use. Internal to <weft/coll.hpp>.
//
// A collective is a sequence of steps; step (sequence, phase) names the same
// step on every rank because every rank numbers its collectives in call
// order. The algorithms run their steps one after another: the blocking
// forms in the calling task, the `_async` forms in a task of their own
// (a step that waits for a message suspends that task only).
#pragma once
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "weft/serialize.hpp"
#include "weft/runtime.hpp"
#include "weft/sched.hpp"

namespace weft::detail {

/// Number of the calling rank's next collective.
std::uint64_t collective_begin();
/// Sends `bytes` for step (seq, phase) to rank `dest`.
void collective_send(int dest, std::uint64_t seq, int phase, std::vector<std::byte>&& bytes);
/// Future of the messages of step (seq, phase), indexed by source rank, once
/// `count` of them have arrived on this rank.
future<std::vector<std::vector<std::byte>>> collective_expect(std::uint64_t seq, int phase, int count);

/// The one message of step (seq, phase), sent by `source`; waits for it.
inline std::vector<std::byte> collective_recv(std::uint64_t seq, int phase, int source) {
  auto by_rank = collective_expect(seq, phase, 1).get();
  return std::move(by_rank[static_cast<std::size_t>(source)]);
}

/// Ends the calling task with a message naming this rank (a value or
/// argument that does not fit the collective's contract).
[[noreturn]] inline void collective_error(const std::string& what) {
  throw std::invalid_argument("weft: rank " + std::to_string(rank()) + ": " + what);
}

template <class T>
std::vector<std::byte> to_bytes(const T& v) {
  serialization::writer w(serialization::writer_options{~std::size_t{0}, 0});  // all inline
  w & v;
  return std::move(w).finish().bytes;
}
template <class T>
T from_bytes(std::span<const std::byte> b) {
  serialization::reader r(b);
  T v = r.template read<T>();
  r.expect_end();
  return v;
}

inline void check_root(int root) {
  if (root < 0 || root >= nranks())
    throw std::out_of_range("weft: rank " + std::to_string(rank()) + ": collective root " + std::to_string(root) +
                            " is not a rank (0.." + std::to_string(nranks() - 1) + ")");
}

// ---- several ranks' values in one message --------------------------------
// The tree collectives (gather, scatter, allgather) pass the values of a
// range of ranks on as one message: each value's byte count (8 bytes), then
// its serialized bytes, in the range's order.

inline void append_part(std::vector<std::byte>& block, std::span<const std::byte> value) {
  const std::uint64_t n = value.size();
  const auto* len = reinterpret_cast<const std::byte*>(&n);
  block.insert(block.end(), len, len + sizeof n);
  block.insert(block.end(), value.begin(), value.end());
}
template <class T>
void append_value(std::vector<std::byte>& block, const T& v) {
  append_part(block, to_bytes(v));
}

/// The `count` values of `block`; a block of another shape means the ranks
/// called different collectives.
inline std::vector<std::span<const std::byte>> split_parts(std::span<const std::byte> block, std::size_t count) {
  std::vector<std::span<const std::byte>> parts;
  parts.reserve(count);
  std::size_t at = 0;
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t n = 0;
    if (block.size() - at < sizeof n) break;
    std::memcpy(&n, block.data() + at, sizeof n);
    at += sizeof n;
    if (n > block.size() - at) break;
    parts.push_back(block.subspan(at, static_cast<std::size_t>(n)));
    at += static_cast<std::size_t>(n);
  }
  if (parts.size() != count || at != block.size())
    collective_error("a collective message does not hold the " + std::to_string(count) +
                     " values expected (do all ranks call the same collectives in the same order?)");
  return parts;
}

/// Values [first, first + count) of a split block, as a block of their own.
inline std::vector<std::byte> sub_block(const std::vector<std::span<const std::byte>>& parts, std::size_t first,
                                        std::size_t count) {
  if (count == 0) return {};
  const std::byte* begin = parts[first].data() - sizeof(std::uint64_t);
  const std::byte* end = parts[first + count - 1].data() + parts[first + count - 1].size();
  return std::vector<std::byte>(begin, end);
}

// ---- rank groupings -------------------------------------------------------

/// The ranks as a power-of-two group for recursive doubling and halving:
/// with p = bit_floor(n) and rem = n - p, ranks 2i and 2i+1 (i < rem) first
/// combine at rank 2i, so each of the p members stands for one or two
/// consecutive ranks, in rank order. Member m's partner at step d (a power
/// of two below p) is m ^ d; the lower member's value goes first, so a
/// reduction brackets as a balanced tree over consecutive rank ranges.
struct pow2_group {
  int n, p, rem;
  explicit pow2_group(int nranks)
      : n(nranks), p(static_cast<int>(std::bit_floor(static_cast<unsigned>(nranks)))), rem(nranks - p) {}
  /// Hands its value to r - 1 first and gets the result from it last.
  bool folded_away(int r) const noexcept { return r < 2 * rem && (r & 1) != 0; }
  /// Takes r + 1's value first and hands it the result last.
  bool absorbs(int r) const noexcept { return r < 2 * rem && (r & 1) == 0; }
  int member(int r) const noexcept { return r < 2 * rem ? r / 2 : r - rem; }
  int rank_of(int m) const noexcept { return m < rem ? 2 * m : m + rem; }
};

/// log2 of a power of two.
inline int level(int power_of_two) noexcept { return std::countr_zero(static_cast<unsigned>(power_of_two)); }

/// A binomial tree rooted at `root` over all ranks: virtual rank
/// v = (rank - root) mod n; v's parent is v minus its lowest set bit, its
/// children v + d for the powers of two d below that bit (and v + d < n).
/// Each subtree holds a range of consecutive virtual ranks.
struct binomial_tree {
  int n, root, v;
  binomial_tree(int nranks, int root_rank, int me) : n(nranks), root(root_rank), v((me - root_rank + nranks) % nranks) {}
  int real(int virt) const noexcept { return (virt + root) % n; }
  /// Lowest set bit of v; for the root, the power of two above every child.
  int span() const noexcept {
    return v == 0 ? static_cast<int>(std::bit_ceil(static_cast<unsigned>(n))) : (v & -v);
  }
  int parent() const noexcept { return real(v - (v & -v)); }
  /// Virtual ranks in the subtree of v: [v, v + size()).
  int size() const noexcept { return std::min(span(), n - v); }
};

/// Phases of one collective's steps.
inline constexpr int phase_fold = 0;     // pow2_group: the pairs' first message
inline constexpr int phase_step = 1;     // + step index
inline constexpr int phase_back = 100;   // + step index: the way back (allgather half)
inline constexpr int phase_unfold = 200; // pow2_group: the result to the folded rank
inline constexpr int phase_result = 201; // a result forwarded to a root

}  // namespace weft::detail
