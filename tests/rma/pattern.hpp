// Test helper: reproducible byte patterns, so a receiver can check data it
// got without a copy of the original (a different seed per source/target).
// Built page by page from one seeded page plus a stamp per page (so a page
// in the wrong place is caught), with memcpy/memcmp: cheap for 64 MiB even
// under ThreadSanitizer, which checks a whole range per call.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace weft::test {

inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

namespace detail {
constexpr std::size_t page = 4096;
/// The seeded page; page k of the pattern is it with a stamp in front.
inline std::array<std::byte, page> base_page(std::uint64_t seed) {
  std::array<std::byte, page> out;
  for (std::size_t i = 0; i < page; i += 8) {
    const std::uint64_t v = mix64(seed * 0x100000001b3ull + i);
    std::memcpy(out.data() + i, &v, 8);
  }
  return out;
}
inline void stamp(std::array<std::byte, page>& p, std::uint64_t seed, std::size_t k) {
  const std::uint64_t s = mix64(~seed + k);
  std::memcpy(p.data(), &s, 8);
}
}  // namespace detail

inline void fill_pattern(void* dst, std::size_t n, std::uint64_t seed) {
  auto buf = detail::base_page(seed);
  auto* p = static_cast<std::byte*>(dst);
  for (std::size_t k = 0; k * detail::page < n; ++k) {
    detail::stamp(buf, seed, k);
    std::memcpy(p + k * detail::page, buf.data(), std::min(detail::page, n - k * detail::page));
  }
}

/// True if [src, src + n) holds the pattern of `seed`.
inline bool has_pattern(const void* src, std::size_t n, std::uint64_t seed) {
  auto buf = detail::base_page(seed);
  const auto* p = static_cast<const std::byte*>(src);
  for (std::size_t k = 0; k * detail::page < n; ++k) {
    detail::stamp(buf, seed, k);
    if (std::memcmp(p + k * detail::page, buf.data(), std::min(detail::page, n - k * detail::page)) != 0)
      return false;
  }
  return true;
}

/// An uninitialized buffer (large test buffers need no zeroing first).
inline std::unique_ptr<std::byte[]> raw_buffer(std::size_t n) { return std::unique_ptr<std::byte[]>(new std::byte[n]); }

inline std::vector<std::byte> pattern(std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> v(n);
  fill_pattern(v.data(), n, seed);
  return v;
}

}  // namespace weft::test
