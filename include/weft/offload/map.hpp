// weft offload — map clauses (OpenMP's map(to/from/tofrom/alloc)) and the
// per-device present table behind them.
//
// @code
//   // given: std::vector<double> x, y, z, w;
//   weft::map_to(x);              // copy x to the device before the kernel
//   weft::map_from(y);            // copy y back to the host after it
//   weft::map_tofrom(z);          // both
//   weft::map_alloc(w);           // device memory only, no copy
//   weft::map_to(x).always();     // copy even when x is already present
//   weft::map_release(x);         // (target_exit_data only)
//   weft::map_delete(x);          // (target_exit_data only)
// @endcode
//
// x is a std::vector<T>, a std::span<T> (any extent; std::span<const T>
// for map_to, map_release and map_delete only) or a pointer and a count, of
// trivially copyable T, in the calling rank's memory. Each rank has, for
// every device, a table of its host ranges present there with reference
// counts (OpenMP semantics): mapping a range that is present copies nothing
// unless `always` is given; a range that overlaps a present one with a
// different extent is an error.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "weft/future.hpp"

namespace weft {

enum class map_kind : std::uint8_t { alloc = 0, to = 1, from = 2, tofrom = 3, release = 4, remove = 5 };

template <class T>
struct map_clause {
  static_assert(std::is_trivially_copyable_v<T>, "weft map clauses take trivially copyable elements");
  static_assert(!std::is_const_v<T>,
                "weft::map_from/map_tofrom/map_alloc: the host range may be written back, so it must not be const "
                "(map_to takes const ranges)");
  T* data = nullptr;
  std::size_t count = 0;
  map_kind kind = map_kind::alloc;
  bool always_copy = false;
  /// OpenMP's `always` modifier: copy even when the range is present.
  map_clause always() const noexcept {
    map_clause c = *this;
    c.always_copy = true;
    return c;
  }
  bool copies_in() const noexcept { return kind == map_kind::to || kind == map_kind::tofrom; }
  bool copies_out() const noexcept { return kind == map_kind::from || kind == map_kind::tofrom; }
  std::size_t bytes() const noexcept { return count * sizeof(T); }
};

namespace detail {
template <class T>
map_clause<T> make_map(T* p, std::size_t n, map_kind k) {
  return {p, n, k, false};
}
template <class T>
map_clause<T> make_map(const T* p, std::size_t n, map_kind k) {
  // A map that only copies to the device never writes the host range.
  return {const_cast<T*>(p), n, k, false};
}
}  // namespace detail

template <class T> map_clause<T> map_to(const std::vector<T>& v) { return detail::make_map(v.data(), v.size(), map_kind::to); }
template <class T, std::size_t E> map_clause<std::remove_const_t<T>> map_to(std::span<T, E> s) { return detail::make_map(s.data(), s.size(), map_kind::to); }
template <class T> map_clause<T> map_to(const T* p, std::size_t n) { return detail::make_map(p, n, map_kind::to); }

template <class T> map_clause<T> map_from(std::vector<T>& v) { return detail::make_map(v.data(), v.size(), map_kind::from); }
template <class T, std::size_t E> map_clause<T> map_from(std::span<T, E> s) { return {s.data(), s.size(), map_kind::from, false}; }
template <class T> map_clause<T> map_from(T* p, std::size_t n) { return detail::make_map(p, n, map_kind::from); }

template <class T> map_clause<T> map_tofrom(std::vector<T>& v) { return detail::make_map(v.data(), v.size(), map_kind::tofrom); }
template <class T, std::size_t E> map_clause<T> map_tofrom(std::span<T, E> s) { return {s.data(), s.size(), map_kind::tofrom, false}; }
template <class T> map_clause<T> map_tofrom(T* p, std::size_t n) { return detail::make_map(p, n, map_kind::tofrom); }

template <class T> map_clause<T> map_alloc(std::vector<T>& v) { return detail::make_map(v.data(), v.size(), map_kind::alloc); }
template <class T, std::size_t E> map_clause<T> map_alloc(std::span<T, E> s) { return {s.data(), s.size(), map_kind::alloc, false}; }
template <class T> map_clause<T> map_alloc(T* p, std::size_t n) { return detail::make_map(p, n, map_kind::alloc); }

// release and delete only name a range (exit_data's `from` comes from an
// enter's or a target's clause of its own), so they take const ranges too.
template <class T> map_clause<T> map_release(const std::vector<T>& v) { return detail::make_map(v.data(), v.size(), map_kind::release); }
template <class T, std::size_t E> map_clause<std::remove_const_t<T>> map_release(std::span<T, E> s) { return detail::make_map(s.data(), s.size(), map_kind::release); }
template <class T> map_clause<T> map_release(const T* p, std::size_t n) { return detail::make_map(p, n, map_kind::release); }
template <class T> map_clause<T> map_delete(const std::vector<T>& v) { return detail::make_map(v.data(), v.size(), map_kind::remove); }
template <class T, std::size_t E> map_clause<std::remove_const_t<T>> map_delete(std::span<T, E> s) { return detail::make_map(s.data(), s.size(), map_kind::remove); }
template <class T> map_clause<T> map_delete(const T* p, std::size_t n) { return detail::make_map(p, n, map_kind::remove); }

namespace detail {

/// One host range present on a device (src/offload/present_table.cpp).
/// `address` is valid once `ready` is. Two counts, as OpenMP's runtime
/// keeps: `refs` from target_enter_data (map_delete drops them all) and
/// `holds`, one per target task in flight that maps the range, which
/// nothing else drops. The range stays on the device while either is
/// non-zero; whoever drops the last reference takes it out of the table,
/// copies it back if its clause says so, and frees it.
struct present_entry {
  int device = -1;
  const std::byte* host = nullptr;
  std::size_t bytes = 0;
  std::atomic<std::uint64_t> address{0};
  shared_future<void> ready;
  long refs = 0;   // under the table's lock
  long holds = 0;  // under the table's lock
};
using present_ref = std::shared_ptr<present_entry>;

/// The calling rank's entry for exactly [host, host + bytes) on `device`,
/// held by one more target task; nullptr when nothing of the range is
/// present. Throws std::invalid_argument when it overlaps an entry of
/// another extent.
present_ref present_acquire(int device, const void* host, std::size_t bytes);
/// Drops a hold taken by present_acquire, at the end of its target task.
/// When that was the range's last reference, the range leaves the table,
/// is copied back into `copy_back_to` unless that is null, and is freed;
/// the future is ready once that is done (at once otherwise).
future<void> present_release(const present_ref& e, void* copy_back_to);

/// The data directives for one range (they return when the table is
/// updated; the copies finish with the future).
future<void> enter_range(int device, void* host, std::size_t bytes, map_kind kind, bool always);
future<void> exit_range(int device, void* host, std::size_t bytes, map_kind kind, bool always);
/// (`always` is ignored: an update always copies.)
future<void> update_range(int device, void* host, std::size_t bytes, map_kind kind, bool always);

}  // namespace detail
}  // namespace weft
