// weft — reductions of vectors element by element:
//
// @code
//   // given: std::vector<double> local;
//   std::vector<double> sum = weft::allreduce(std::move(local), weft::elementwise{std::plus<>{}});
// @endcode
//
// Internal to <weft/coll.hpp>. For trivially copyable elements allreduce
// sends raw element bytes and, from elementwise_halving_bytes up, runs
// reduce-scatter by recursive halving then allgather by recursive doubling
// (Rabenseifner): each rank sends and combines about 2 (p-1)/p of the vector
// instead of log2(p) whole vectors.
#pragma once
#include <vector>

#include "weft/coll/reduce.hpp"

namespace weft {

/// Wraps a binary op on elements into one on std::vectors of equal length:
/// (a, b) -> {op(a[0], b[0]), op(a[1], b[1]), ...}. Usable with every
/// reduction; allreduce has a faster path for it.
template <class Op>
struct elementwise {
  Op op;
  template <class T>
  std::vector<T> operator()(std::vector<T> a, const std::vector<T>& b) const {
    if (a.size() != b.size())
      detail::collective_error("elementwise reduction of vectors of different lengths (" + std::to_string(a.size()) +
                               " and " + std::to_string(b.size()) + ")");
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = op(std::move(a[i]), b[i]);
    return a;
  }
};
template <class Op>
elementwise(Op) -> elementwise<Op>;

namespace detail {

/// From this many bytes on, elementwise allreduce splits the vector.
inline constexpr std::size_t elementwise_halving_bytes = 2048;

/// The elements [lo, hi) of one rank's vector during an elementwise
/// allreduce, and the messages that carry them.
template <class T, class Op>
struct element_ranges {
  std::vector<T>& acc;
  const Op& op;
  std::uint64_t seq;

  void send(int dest, int phase, std::size_t lo, std::size_t hi) const {
    const auto* p = reinterpret_cast<const std::byte*>(acc.data() + lo);
    collective_send(dest, seq, phase, std::vector<std::byte>(p, p + (hi - lo) * sizeof(T)));
  }
  std::vector<std::byte> receive(int source, int phase, std::size_t lo, std::size_t hi) const {
    std::vector<std::byte> b = collective_recv(seq, phase, source);
    if (b.size() != (hi - lo) * sizeof(T))
      collective_error("elementwise allreduce: rank " + std::to_string(source) + " sent " + std::to_string(b.size()) +
                       " bytes for elements [" + std::to_string(lo) + ", " + std::to_string(hi) + ") of " +
                       std::to_string(sizeof(T)) + " bytes (do all ranks pass vectors of the same length?)");
    return b;
  }
  /// acc[i] = op(acc[i], theirs[i]) (or op(theirs[i], acc[i]) when the
  /// sender stands for lower ranks), for i in [lo, hi).
  void combine(int source, int phase, std::size_t lo, std::size_t hi, bool mine_first) const {
    const std::vector<std::byte> b = receive(source, phase, lo, hi);
    T* a = acc.data() + lo;
    for (std::size_t i = 0; i < hi - lo; ++i) {
      T theirs;
      std::memcpy(&theirs, b.data() + i * sizeof(T), sizeof(T));  // received bytes carry no alignment
      a[i] = mine_first ? op(a[i], theirs) : op(theirs, a[i]);
    }
  }
  void place(int source, int phase, std::size_t lo, std::size_t hi) const {
    const std::vector<std::byte> b = receive(source, phase, lo, hi);
    if (!b.empty()) std::memcpy(acc.data() + lo, b.data(), b.size());
  }
};

template <class T, class Op>
std::vector<T> allreduce_elementwise_steps(std::uint64_t seq, std::vector<T> acc, Op op) {
  if constexpr (!std::is_trivially_copyable_v<T> || !std::is_default_constructible_v<T>) {
    return allreduce_steps(seq, std::move(acc), elementwise<Op>{std::move(op)});
  } else {
    const int me = rank();
    const pow2_group g(nranks());
    const std::size_t len = acc.size();
    const element_ranges<T, Op> el{acc, op, seq};
    if (g.folded_away(me)) {
      el.send(me - 1, phase_fold, 0, len);
      el.place(me - 1, phase_unfold, 0, len);
      return acc;
    }
    if (g.absorbs(me)) el.combine(me + 1, phase_fold, 0, len, true);
    const int m = g.member(me);
    if (len * sizeof(T) < elementwise_halving_bytes || len < static_cast<std::size_t>(g.p)) {
      for (int d = 1, k = 0; d < g.p; d <<= 1, ++k) {
        const int partner = g.rank_of(m ^ d);
        el.send(partner, phase_step + k, 0, len);
        el.combine(partner, phase_step + k, 0, len, (m & d) == 0);
      }
    } else {
      // Reduce-scatter: at step d the partners hold the same range and each
      // keeps one half of it, reduced over both their blocks of ranks.
      std::vector<std::pair<std::size_t, std::size_t>> ranges;  // the range before each step
      std::size_t lo = 0, hi = len;
      for (int d = 1, k = 0; d < g.p; d <<= 1, ++k) {
        const int partner = g.rank_of(m ^ d);
        ranges.emplace_back(lo, hi);
        const std::size_t mid = lo + (hi - lo) / 2;
        if ((m & d) == 0) {
          el.send(partner, phase_step + k, mid, hi);
          el.combine(partner, phase_step + k, lo, mid, true);
          hi = mid;
        } else {
          el.send(partner, phase_step + k, lo, mid);
          el.combine(partner, phase_step + k, mid, hi, false);
          lo = mid;
        }
      }
      // Allgather: the same pairs in reverse order swap their finished halves.
      for (int k = static_cast<int>(ranges.size()) - 1; k >= 0; --k) {
        const int d = 1 << k;
        const int partner = g.rank_of(m ^ d);
        const auto [plo, phi] = ranges[static_cast<std::size_t>(k)];
        el.send(partner, phase_back + k, lo, hi);
        if ((m & d) == 0)
          el.place(partner, phase_back + k, hi, phi);
        else
          el.place(partner, phase_back + k, plo, lo);
        lo = plo;
        hi = phi;
      }
    }
    if (g.absorbs(me)) el.send(me + 1, phase_unfold, 0, len);
    return acc;
  }
}

}  // namespace detail

/// Every rank's vector reduced element by element, on every rank (the same
/// bits). All ranks pass vectors of the same length.
template <class T, class Op>
std::vector<T> allreduce(std::vector<T> values, elementwise<Op> op) {
  return detail::allreduce_elementwise_steps<T, Op>(detail::collective_begin(), std::move(values), std::move(op.op));
}
template <class T, class Op>
future<std::vector<T>> allreduce_async(std::vector<T> values, elementwise<Op> op) {
  return async(detail::allreduce_elementwise_steps<T, Op>, detail::collective_begin(), std::move(values),
               std::move(op.op));
}

}  // namespace weft
