// weft — parallel patterns for fork-join across ranks: loops, reductions
// and a merge sort over index ranges, global spans and global vectors, built
// on parallel_invoke (so any rank may run any part) and checkouts.
//
// @code
//   // given: long n; weft::global_span<double> span, scratch;
//   weft::fork_policy p{.cutoff = 4096, .checkout_count = 1024};
//   weft::parallel_for_each(p, 0L, n, [](long i) { /* ... */ });           // f(i)
//   weft::parallel_for_each(p, span, [](double& x) { x *= 2; });           // read_write checkouts
//   double s = weft::transform_reduce(p, span, 0.0, std::plus<>(),
//                                     [](const double& x) { return x * x; });  // read checkouts
//   weft::parallel_sort(p, span, scratch);   // cilksort-like; scratch: a global_span of span.size elements
// @endcode
//
// A range is split in halves until a part has at most `cutoff` elements
// (one task); inside a task, elements of global memory are checked out
// `checkout_count` at a time. Both default to 1 (one task and one checkout
// per element: correct for any size, but slow); set them to thousands of
// elements for real work. Functions follow the rules of forked tasks
// (trivially copyable, no captured local addresses: <weft/forkjoin.hpp>).
#pragma once
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <type_traits>

#include "weft/checkout.hpp"
#include "weft/forkjoin.hpp"
#include "weft/pgas.hpp"

namespace weft {

/// How a pattern divides its work: at most `cutoff` elements per task, at
/// most `checkout_count` elements per checkout inside a task (0: a task's
/// whole part at once, within one rank's block). The defaults, 1 and 1,
/// make a task and a checkout per element; real work wants thousands of
/// elements for both. A cutoff of 0 counts as 1 (as 2 for parallel_sort).
struct fork_policy {
  std::size_t cutoff = 1;
  std::size_t checkout_count = 1;
};

namespace detail::fj {

/// g(lo, hi) for the parts of [lo, hi) left after halving down to `cutoff`.
template <class G>
void for_each_block(std::size_t lo, std::size_t hi, std::size_t cutoff, G g) {
  if (hi - lo <= cutoff) {
    g(lo, hi);
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  weft::parallel_invoke([=] { for_each_block(lo, mid, cutoff, g); }, [=] { for_each_block(mid, hi, cutoff, g); });
}

/// reduce over the parts of [lo, hi), each part's value g(lo, hi).
template <class R, class Reduce, class G>
R reduce_blocks(std::size_t lo, std::size_t hi, std::size_t cutoff, Reduce red, G g) {
  if (hi - lo <= cutoff) return g(lo, hi);
  const std::size_t mid = lo + (hi - lo) / 2;
  auto [a, b] = weft::parallel_invoke([=] { return reduce_blocks<R>(lo, mid, cutoff, red, g); },
                                      [=] { return reduce_blocks<R>(mid, hi, cutoff, red, g); });
  return red(a, b);
}

/// f(piece) for the pieces of elements [lo, hi) of `v` that lie on one rank
/// and hold at most `count` elements each (global_span pieces).
template <class T, class F>
void for_pieces(const global_vector<T>& v, std::size_t lo, std::size_t hi, std::size_t count, F&& f) {
  while (lo < hi) {
    const std::size_t block_end = (lo / v.block_size() + 1) * v.block_size();
    const std::size_t n = std::min({hi - lo, count == 0 ? hi - lo : count, block_end - lo});
    f(global_span<T>{v[lo], n});
    lo += n;
  }
}
template <class T, class F>
void for_pieces(const global_span<T>& s, std::size_t lo, std::size_t hi, std::size_t count, F&& f) {
  while (lo < hi) {
    const std::size_t n = std::min(hi - lo, count == 0 ? hi - lo : count);
    f(s.subspan(lo, n));
    lo += n;
  }
}

template <class T>
std::size_t length(const global_span<T>& s) noexcept {
  return s.size;
}
template <class T>
std::size_t length(const global_vector<T>& v) noexcept {
  return v.size();
}

/// Read-only when f takes its element by value or const reference.
template <class T, class F>
constexpr bool reads_only = std::is_invocable_v<F&, const T&>;

template <class T, class F>
void apply_to_piece(global_span<T> piece, F& f) {
  if constexpr (reads_only<T, F>) {
    auto view = make_checkout(piece, checkout_mode::read);
    for (const T& x : view) f(x);
  } else {
    auto view = make_checkout(piece, checkout_mode::read_write);
    for (T& x : view) f(x);
  }
}

// ---- merge sort (cilksort's structure: sort halves, merge in parallel) ----------

template <class T>
T element(global_span<T> s, std::size_t i) {
  auto one = make_checkout(s.subspan(i, 1), checkout_mode::read);
  return one[0];
}

/// The first index of `s` whose element is not less than `key` (by comp).
template <class T, class Compare>
std::size_t lower_bound_in(global_span<T> s, const T& key, Compare comp) {
  std::size_t lo = 0, hi = s.size;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (comp(element(s, mid), key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// Merges sorted a and b into out (out.size == a.size + b.size).
template <class T, class Compare>
void merge_into(global_span<T> a, global_span<T> b, global_span<T> out, std::size_t cutoff, Compare comp) {
  if (a.size < b.size) std::swap(a, b);  // split the longer one
  if (a.size + b.size <= cutoff || b.size == 0) {
    auto ra = make_checkout(a, checkout_mode::read);
    auto rb = make_checkout(b, checkout_mode::read);
    auto w = make_checkout(out, checkout_mode::write);
    std::merge(ra.begin(), ra.end(), rb.begin(), rb.end(), w.begin(), comp);
    return;
  }
  const std::size_t ma = a.size / 2;
  const T pivot = element(a, ma);
  const std::size_t mb = lower_bound_in(b, pivot, comp);
  const global_span<T> a1 = a.subspan(0, ma), a2 = a.subspan(ma, a.size - ma);
  const global_span<T> b1 = b.subspan(0, mb), b2 = b.subspan(mb, b.size - mb);
  const global_span<T> o1 = out.subspan(0, ma + mb), o2 = out.subspan(ma + mb, out.size - ma - mb);
  weft::parallel_invoke([=] { merge_into(a1, b1, o1, cutoff, comp); },
                        [=] { merge_into(a2, b2, o2, cutoff, comp); });
}

/// Sorts `s`; `tmp` (same size) is scratch. `in_tmp`: leave the result in
/// tmp instead of s (the halves ping-pong between the two, no copy back).
template <class T, class Compare>
void sort_into(global_span<T> s, global_span<T> tmp, bool in_tmp, std::size_t cutoff, Compare comp) {
  if (s.size <= cutoff) {
    if (!in_tmp) {
      auto v = make_checkout(s, checkout_mode::read_write);
      std::sort(v.begin(), v.end(), comp);
    } else {
      auto v = make_checkout(s, checkout_mode::read);
      auto w = make_checkout(tmp, checkout_mode::write);
      std::copy(v.begin(), v.end(), w.begin());
      std::sort(w.begin(), w.end(), comp);
    }
    return;
  }
  const std::size_t h = s.size / 2;
  const global_span<T> s1 = s.subspan(0, h), s2 = s.subspan(h, s.size - h);
  const global_span<T> t1 = tmp.subspan(0, h), t2 = tmp.subspan(h, tmp.size - h);
  // Sort the halves into the other array, then merge them back into ours.
  weft::parallel_invoke([=] { sort_into(s1, t1, !in_tmp, cutoff, comp); },
                        [=] { sort_into(s2, t2, !in_tmp, cutoff, comp); });
  if (in_tmp) merge_into(s1, s2, tmp, cutoff, comp);
  else merge_into(t1, t2, s, cutoff, comp);
}

}  // namespace detail::fj

/// f(i) for every i in [first, last), in tasks of at most p.cutoff indices.
template <std::integral I, class F>
void parallel_for_each(fork_policy p, I first, I last, F f) {
  if (!(first < last)) return;
  detail::fj::for_each_block(0, static_cast<std::size_t>(last - first), std::max<std::size_t>(p.cutoff, 1),
                             [=](std::size_t lo, std::size_t hi) {
                               for (std::size_t k = lo; k < hi; ++k) f(static_cast<I>(first + static_cast<I>(k)));
                             });
}

/// f(element) for every element of `r` (a global_span or global_vector):
/// f(T&) updates them (read_write checkouts), f(const T&) reads them.
template <class Range, class F>
  requires requires(const Range& r) { detail::fj::length(r); }
void parallel_for_each(fork_policy p, Range r, F f) {
  const std::size_t count = p.checkout_count;
  detail::fj::for_each_block(0, detail::fj::length(r), std::max<std::size_t>(p.cutoff, 1),
                             [=](std::size_t lo, std::size_t hi) mutable {
                               detail::fj::for_pieces(r, lo, hi, count,
                                                      [&](auto piece) { detail::fj::apply_to_piece(piece, f); });
                             });
}

/// reduce(..., map(i)) over [first, last); `init` starts every task's part
/// (so it must be reduce's identity).
template <std::integral I, class R, class Reduce, class Map>
R transform_reduce(fork_policy p, I first, I last, R init, Reduce reduce, Map map) {
  if (!(first < last)) return init;
  return detail::fj::reduce_blocks<R>(0, static_cast<std::size_t>(last - first), std::max<std::size_t>(p.cutoff, 1),
                                      reduce, [=](std::size_t lo, std::size_t hi) {
                                        R acc = init;
                                        for (std::size_t k = lo; k < hi; ++k)
                                          acc = reduce(acc, map(static_cast<I>(first + static_cast<I>(k))));
                                        return acc;
                                      });
}

/// reduce(..., map(element)) over the elements of `r` (a global_span or
/// global_vector), read through checkouts; `init` as above.
template <class Range, class R, class Reduce, class Map>
  requires requires(const Range& r) { detail::fj::length(r); }
R transform_reduce(fork_policy p, Range r, R init, Reduce reduce, Map map) {
  const std::size_t count = p.checkout_count;
  if (detail::fj::length(r) == 0) return init;
  return detail::fj::reduce_blocks<R>(0, detail::fj::length(r), std::max<std::size_t>(p.cutoff, 1), reduce,
                                      [=](std::size_t lo, std::size_t hi) {
                                        R acc = init;
                                        detail::fj::for_pieces(r, lo, hi, count, [&](auto piece) {
                                          auto view = make_checkout(piece, checkout_mode::read);
                                          for (const auto& x : view) acc = reduce(acc, map(x));
                                        });
                                        return acc;
                                      });
}

/// Sorts the elements of `s` (cilksort-like parallel merge sort; `tmp`, of
/// the same size, is scratch).
template <class T, class Compare = std::less<>>
void parallel_sort(fork_policy p, global_span<T> s, global_span<T> tmp, Compare comp = {}) {
  if (tmp.size != s.size) throw std::invalid_argument("weft::parallel_sort: scratch span of a different size");
  detail::fj::sort_into(s, tmp, false, std::max<std::size_t>(p.cutoff, 2), comp);
}

}  // namespace weft
