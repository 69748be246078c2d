// Device memory from anywhere: allocation and free by the owning rank, host
// <-> device copies, and device -> device copies that go from the source's
// rank straight to the destination's in 1 MiB fragments (the next fragment
// is read while the previous ones travel).
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "offload/device_state.hpp"
#include "weft/am.hpp"
#include "weft/offload/device_buffer.hpp"
#include "weft/when_all.hpp"

namespace weft::detail {

namespace {

constexpr std::size_t fragment_bytes = std::size_t{1} << 20;

std::uint64_t allocate_here(int device, std::size_t bytes) { return local_device_of(device).allocate(bytes); }

void free_here(int device, std::uint64_t address) { local_device_of(device).free(address); }

std::size_t bytes_in_use_here(int device) { return local_device_of(device).bytes_in_use(); }

void write_here(int device, std::uint64_t address, std::vector<std::byte> bytes) {
  local_device& d = local_device_of(device);
  d.write(d.resolve(address, bytes.size()), bytes.data(), bytes.size());
}

std::vector<std::byte> read_here(int device, std::uint64_t address, std::size_t bytes) {
  local_device& d = local_device_of(device);
  const std::byte* from = d.resolve(address, bytes);
  std::vector<std::byte> out(bytes);
  d.read(out.data(), from, bytes);
  return out;
}

/// Two devices of this rank: in place on one device, directly when one
/// side is host memory, else through this rank's memory (no peer access).
void copy_between(local_device& t, std::byte* to, local_device& s, const std::byte* from, std::size_t bytes) {
  if (&t == &s) {
    t.copy_within(to, from, bytes);
  } else if (s.host_addressable()) {
    t.write(to, from, bytes);
  } else if (t.host_addressable()) {
    s.read(to, from, bytes);
  } else {
    for (std::size_t off = 0; off < bytes; off += fragment_bytes) {
      const std::size_t n = std::min(fragment_bytes, bytes - off);
      std::vector<std::byte> piece(n);
      s.read(piece.data(), from + off, n);
      t.write(to + off, piece.data(), n);
    }
  }
}

/// Runs on the source device's rank.
void push_here(int dst_device, std::uint64_t dst, int src_device, std::uint64_t src, std::size_t bytes) {
  local_device& s = local_device_of(src_device);
  const std::byte* from = s.resolve(src, bytes);
  const int dst_rank = device_at(dst_device).rank();
  if (dst_rank == weft::rank()) {
    local_device& t = local_device_of(dst_device);
    std::byte* to = t.resolve(dst, bytes);
    copy_between(t, to, s, from, bytes);
    return;
  }
  std::vector<future<void>> sent;
  for (std::size_t off = 0; off < bytes; off += fragment_bytes) {
    const std::size_t n = std::min(fragment_bytes, bytes - off);
    std::vector<std::byte> piece(n);
    s.read(piece.data(), from + off, n);
    sent.push_back(async_at(dst_rank, &write_here, dst_device, dst + off, std::move(piece)));
  }
  for (auto& f : sent) f.get();
}

template <class F>
future<void> checked(int device, F&& start) {
  try {
    check_device(device);
    return start();
  } catch (...) {
    return make_exceptional_future<void>(std::current_exception());
  }
}

}  // namespace

future<std::uint64_t> device_allocate(int device, std::size_t bytes) {
  try {
    check_device(device);
    return async_at(device_at(device).rank(), &allocate_here, device, bytes);
  } catch (...) {
    return make_exceptional_future<std::uint64_t>(std::current_exception());
  }
}

future<void> device_free(int device, std::uint64_t address) {
  return checked(device, [&] { return async_at(device_at(device).rank(), &free_here, device, address); });
}

future<void> device_write(int device, std::uint64_t address, const void* from, std::size_t bytes) {
  return checked(device, [&] {
    const auto* b = static_cast<const std::byte*>(from);
    std::vector<future<void>> parts;
    std::size_t off = 0;
    do {
      const std::size_t n = std::min(fragment_bytes, bytes - off);
      parts.push_back(async_at(device_at(device).rank(), &write_here, device, address + off,
                               std::vector<std::byte>(b + off, b + off + n)));
      off += n;
    } while (off < bytes);
    return join_all(std::move(parts));
  });
}

future<void> device_read(int device, std::uint64_t address, void* to, std::size_t bytes) {
  return checked(device, [&] {
    auto* b = static_cast<std::byte*>(to);
    std::vector<future<void>> parts;
    std::size_t off = 0;
    do {
      const std::size_t n = std::min(fragment_bytes, bytes - off);
      parts.push_back(async_at(device_at(device).rank(), &read_here, device, address + off, n)
                          .then([dst = b + off, n](future<std::vector<std::byte>> f) {
                            const auto v = f.get();
                            if (v.size() != n) throw protocol_error("weft offload: short device read");
                            if (n != 0) std::memcpy(dst, v.data(), n);
                          }));
      off += n;
    } while (off < bytes);
    return join_all(std::move(parts));
  });
}

future<void> device_copy(int dst_device, std::uint64_t dst, int src_device, std::uint64_t src, std::size_t bytes) {
  return checked(dst_device, [&] {
    check_device(src_device);
    return async_at(device_at(src_device).rank(), &push_here, dst_device, dst, src_device, src, bytes);
  });
}

future<void> join_all(std::vector<future<void>>&& parts) {
  if (parts.size() == 1) return std::move(parts.front());
  return when_all(std::move(parts)).then([](future<std::vector<future<void>>> all) {
    for (auto& f : all.get()) f.get();
  });
}

future<void> out_of_range_future(const char* what, int device, std::size_t offset, std::size_t n,
                                 std::size_t count) {
  return make_exceptional_future<void>(std::make_exception_ptr(std::out_of_range(
      std::string("weft offload: ") + what + " " + describe_device(device) + ": elements [" + std::to_string(offset) +
      ", " + std::to_string(offset + n) + ") outside the buffer's " + std::to_string(count) + " elements")));
}

future<std::size_t> device_bytes_in_use(int device) {
  try {
    check_device(device);
    return async_at(device_at(device).rank(), &bytes_in_use_here, device);
  } catch (...) {
    return make_exceptional_future<std::size_t>(std::current_exception());
  }
}

}  // namespace weft::detail
