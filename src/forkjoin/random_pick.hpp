// Internal: the random choices of thieves (which rank, which of its
// deques): a thread-local xorshift, cheap enough for every attempt.
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft::detail::fj {

inline std::uint64_t next_random() noexcept {
  thread_local std::uint64_t state = 0x9e3779b97f4a7c15ull;
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

/// A random element of the non-empty `v`.
template <class V>
auto pick(const V& v) noexcept {
  return v[static_cast<std::size_t>(next_random() % v.size())];
}

}  // namespace weft::detail::fj
