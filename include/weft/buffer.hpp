// weft::buffer<T> — an immutable, shared array of trivially copyable
// elements that remote calls pass without copying it.
//
// @code
//   // given: std::vector<double> values; int peer;
//   weft::buffer<double> halo(std::move(values));   // adopts the vector, no copy
//   weft::async_at(peer, consume, halo);            // sent from halo's memory
//
//   double consume(weft::buffer<double> in) {       // on the peer
//     return std::accumulate(in.begin(), in.end(), 0.0);
//   }
// @endcode
//
// A std::vector argument is copied out of the message into a fresh vector on
// arrival (and copied into the transport's buffers on the way out over MPI).
// A buffer is not: in-process ranks (smp) hand the elements over as they
// are, and over MPI the receiving handler gets a view into the block MPI
// received the message into, which that buffer (and its copies) keep out of
// the transport's pool until the last copy goes. Copies of a buffer share
// the elements; they never change, which is what makes sharing them with the
// transport and with other ranks safe.
//
// Arrays of up to 512 bytes travel inline and arrive as buffers of their
// own (a small copy). A received
// buffer may share its block with other data of the same batch: to keep a
// small part of a large message for long, copy it (to_vector()). Elements
// that arrive at an address not aligned for T (over MPI, when the message
// framing put them there) are copied into aligned storage.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/serialize.hpp"
#include "weft/detail/task_alloc.hpp"

namespace weft {

template <class T>
class buffer {
  static_assert(std::is_trivially_copyable_v<T> && !std::is_const_v<T> && !std::is_volatile_v<T>,
                "weft::buffer<T> holds trivially copyable, non-const elements");

 public:
  using value_type = T;
  using const_iterator = const T*;
  using iterator = const T*;

  /// An empty buffer.
  buffer() noexcept = default;

  /// Adopts v's elements (no copy).
  explicit buffer(std::vector<T>&& v) {
    if (v.empty()) return;
    auto held = std::make_shared<std::vector<T>>(std::move(v));
    data_ = held->data();
    size_ = held->size();
    owner_ = std::move(held);
  }
  /// Copies the elements of `s`.
  explicit buffer(std::span<const T> s)
      : buffer(make(s.size(), [&](std::span<T> out) { std::copy(s.begin(), s.end(), out.begin()); })) {}
  /// `n` elements, each `value`.
  buffer(std::size_t n, const T& value)
      : buffer(make(n, [&](std::span<T> out) { std::fill(out.begin(), out.end(), value); })) {}

  /// `n` elements written in place by `fill(std::span<T>)` before the
  /// buffer is shared (the storage is not zeroed first).
  template <class Fill>
    requires std::is_invocable_v<Fill&, std::span<T>>
  static buffer make(std::size_t n, Fill&& fill) {
    buffer b;
    if (n == 0) return b;
    // One allocation, not zeroed. From weft's task allocator when T allows:
    // a received array becomes a buffer on every remote call that takes or
    // returns one, and glibc's malloc + free cost ~100 instructions more per
    // received buffer than the per-thread pool (callgrind), which also
    // takes back blocks freed on other threads without locks.
    std::shared_ptr<T[]> storage;
    if constexpr (alignof(T) <= detail::task_alloc_alignment)
      storage = std::allocate_shared_for_overwrite<T[]>(detail::pool_allocator<T>{}, n);
    else
      storage = std::make_shared_for_overwrite<T[]>(n);
    fill(std::span<T>(storage.get(), n));
    b.data_ = storage.get();
    b.size_ = n;
    b.owner_ = std::move(storage);
    return b;
  }

  /// A view of `n` elements at `data` (aligned for T) that `owner` keeps
  /// alive; the elements must not change while any copy of the buffer lives.
  buffer(const T* data, std::size_t n, std::shared_ptr<const void> owner) noexcept
      : data_(n == 0 ? nullptr : data), size_(n), owner_(n == 0 ? nullptr : std::move(owner)) {}

  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  bool empty() const noexcept { return size_ == 0; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  std::span<const T> span() const noexcept { return {data_, size_}; }
  operator std::span<const T>() const noexcept { return span(); }
  /// A mutable copy of the elements.
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  /// Serialization hook (weft::serialization): the elements as one array,
  /// a zero-copy bulk segment when large.
  template <class Ar>
  void serialize(Ar& ar) {
    if constexpr (Ar::is_saving) {
      ar.write_array(data_, size_, bulk_above);
    } else {
      auto [bytes, owner] = ar.template read_array_shared<T>();
      const std::size_t n = bytes.size() / sizeof(T);
      const bool aligned = reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(T) == 0;
      if (owner && aligned) {
        *this = buffer(reinterpret_cast<const T*>(bytes.data()), n, std::move(owner));
      } else {
        *this = make(n, [&](std::span<T> out) {
          if (n != 0) std::memcpy(static_cast<void*>(out.data()), bytes.data(), bytes.size());
        });
      }
    }
  }

 private:
  // Arrays over this many bytes go as bulk segments (no copy in-process, a
  // view of the receive block over MPI), lower than std::vector's 4 KiB: a
  // buffer's elements never change, so sharing them is always safe, and
  // a 4 KiB array copied inline was copied four times per hop over MPI
  // (into the body, into the frame, out of the frame, into the buffer).
  static constexpr std::size_t bulk_above = 512;

  const T* data_ = nullptr;
  std::size_t size_ = 0;
  std::shared_ptr<const void> owner_;
};

}  // namespace weft
