// Test helper: a busy target's long computation, with no weft call, until
// another rank sets `flag` in its heap.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>

namespace weft::test {

/// Computes until `flag` is non-zero; false if a deadline of two minutes
/// came first (it only keeps a broken build from hanging the test).
inline bool compute_until_flag(std::int64_t& flag) {
  std::atomic_ref<std::int64_t> f(flag);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  volatile double x = 1;
  while (f.load(std::memory_order_acquire) == 0) {
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
    if (std::chrono::steady_clock::now() > deadline) return false;
  }
  return true;
}

}  // namespace weft::test
