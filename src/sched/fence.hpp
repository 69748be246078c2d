// A full (store-load) memory fence. ThreadSanitizer does not model
// std::atomic_thread_fence and warns about it at compile time; there a
// seq_cst read-modify-write on a dummy atomic gives the same hardware
// ordering (a locked instruction on x86) without the warning.
#pragma once
#include <atomic>

namespace weft::detail {

inline void full_fence() noexcept {
#if defined(__SANITIZE_THREAD__)
  static std::atomic<int> dummy{0};
  dummy.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace weft::detail
