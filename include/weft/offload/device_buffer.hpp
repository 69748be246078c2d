// weft offload — device memory: typed handles and bounds-checked copies.
//
// @code
//   // given: std::vector<double> host; weft::device_buffer<double> other;
//   weft::device d = weft::devices().back();                 // maybe another rank's
//   auto buf = weft::allocate<double>(d, 1000).get();        // allocated by d's rank
//   weft::copy(buf, 0, host).get();                          // host -> device
//   weft::copy(other, 0, buf, 0, 1000).get();                // device -> device
//   weft::copy(host, buf, 0).get();                          // device -> host
//   weft::deallocate(buf).get();
// @endcode
//
// A device_buffer is a small trivially copyable handle (device id, address on
// the owning rank, element count): it can be passed to remote calls and
// target tasks. The host side of a copy is a std::vector, a std::span or
// anything else that converts to a span of the buffer's T. Every copy
// checks its range against the handle's count (an error reaches the
// returned future) and the owning rank checks it again against its live
// allocations. A copy between devices of different ranks
// goes from the source's rank straight to the destination's, in fragments of
// 1 MiB that travel while the next one is read; the caller only sends the
// order. A host span given to a copy must stay valid until its future is
// ready.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/future.hpp"
#include "weft/offload/device.hpp"

namespace weft {

/// `count` elements of T in the memory of device `device_id`.
template <class T>
struct device_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "weft::device_buffer holds trivially copyable elements");
  int device_id = -1;
  std::uint64_t address = 0;  // on the owning rank
  std::size_t count = 0;

  weft::device device() const noexcept { return device_at(device_id); }
  std::size_t size() const noexcept { return count; }
  std::size_t bytes() const noexcept { return count * sizeof(T); }
  /// Elements [offset, offset + n) as a handle of their own.
  device_buffer subspan(std::size_t offset, std::size_t n) const {
    return {device_id, address + offset * sizeof(T), n};
  }
};

namespace detail {

/// Byte-level operations behind the typed API (src/offload/transfers.cpp).
future<std::uint64_t> device_allocate(int device, std::size_t bytes);
future<void> device_free(int device, std::uint64_t address);
/// Copies `bytes` from the caller's memory now (the caller may reuse it
/// when this returns).
future<void> device_write(int device, std::uint64_t address, const void* from, std::size_t bytes);
/// `to` must stay valid until the future is ready.
future<void> device_read(int device, std::uint64_t address, void* to, std::size_t bytes);
future<void> device_copy(int dst_device, std::uint64_t dst, int src_device, std::uint64_t src, std::size_t bytes);

/// One future for all of `parts` (the first error, after all are done).
future<void> join_all(std::vector<future<void>>&& parts);

/// The exceptional future of a range outside a buffer: "weft offload:
/// <what> device 3 (cpu, rank 1): elements [8, 11) outside the buffer's 10
/// elements".
future<void> out_of_range_future(const char* what, int device, std::size_t offset, std::size_t n,
                                 std::size_t count);

/// Diagnostics (tests): the bytes allocated on a device, asked of its rank.
future<std::size_t> device_bytes_in_use(int device);

inline bool outside(std::size_t offset, std::size_t n, std::size_t count) noexcept {
  return offset > count || n > count - offset;
}

}  // namespace detail

/// Allocates `n` elements of T on device `d` (by d's rank).
template <class T>
future<device_buffer<T>> allocate(const device& d, std::size_t n) {
  const int id = d.id();
  return detail::device_allocate(id, n * sizeof(T)).then([id, n](future<std::uint64_t> a) {
    return device_buffer<T>{id, a.get(), n};
  });
}

/// Frees a buffer from allocate (on its device's rank).
template <class T>
future<void> deallocate(const device_buffer<T>& b) {
  return detail::device_free(b.device_id, b.address);
}

// The host side of a copy is any contiguous range of T that converts to a
// span (a std::vector, a std::array, a span of any extent; a const one only
// as a source); T comes from the device buffer.

/// Host -> device: `from` into dst[offset, offset + from.size()).
template <class T>
future<void> copy(const device_buffer<T>& dst, std::size_t offset, std::type_identity_t<std::span<const T>> from) {
  if (detail::outside(offset, from.size(), dst.count))
    return detail::out_of_range_future("copy to", dst.device_id, offset, from.size(), dst.count);
  return detail::device_write(dst.device_id, dst.address + offset * sizeof(T), from.data(), from.size_bytes());
}

/// Device -> host: src[offset, offset + to.size()) into `to`.
template <class T>
future<void> copy(std::type_identity_t<std::span<T>> to, const device_buffer<T>& src, std::size_t offset) {
  if (detail::outside(offset, to.size(), src.count))
    return detail::out_of_range_future("copy from", src.device_id, offset, to.size(), src.count);
  return detail::device_read(src.device_id, src.address + offset * sizeof(T), to.data(), to.size_bytes());
}

/// Device -> device: src[src_offset, +n) into dst[dst_offset, +n).
template <class T>
future<void> copy(const device_buffer<T>& dst, std::size_t dst_offset, const device_buffer<T>& src,
                  std::size_t src_offset, std::size_t n) {
  if (detail::outside(dst_offset, n, dst.count))
    return detail::out_of_range_future("device-to-device copy into", dst.device_id, dst_offset, n, dst.count);
  if (detail::outside(src_offset, n, src.count))
    return detail::out_of_range_future("device-to-device copy from", src.device_id, src_offset, n, src.count);
  return detail::device_copy(dst.device_id, dst.address + dst_offset * sizeof(T), src.device_id,
                             src.address + src_offset * sizeof(T), n * sizeof(T));
}

}  // namespace weft
