// Memory fences for the scheduler's Dekker-style hand-shakes.
//
// full_fence: a store-load fence. ThreadSanitizer does not model
// std::atomic_thread_fence and warns about it at compile time; there a
// seq_cst read-modify-write on a dummy atomic gives the same hardware
// ordering (a locked instruction on x86) without the warning.
//
// light_fence / heavy_fence: an asymmetric pair for a hand-shake with one
// hot side and one rare side. The hot side (a producer that publishes work,
// then checks whether anyone sleeps: every spawn and every message) runs
// light_fence, which is only a compiler barrier; the rare side (a worker
// about to sleep) runs heavy_fence, which makes every running thread of the
// process execute a full barrier (Linux membarrier, private expedited).
// Either the producer sees the sleeper or the sleeper sees the work, as
// with two full fences, but the producer no longer waits for its store
// buffer to drain (the store that missed in cache: the other core's ring
// slot or deque line). Where membarrier is unavailable (older kernels,
// seccomp filters) or turned off (--weft:asymmetric-fences=0, handed down
// by the runtime through allow_asymmetric_fences), both are full fences.
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

/// Whether light_fence may be a compiler barrier (set once, see
/// enable_asymmetric_fences).
extern std::atomic<bool> asymmetric_fences;

/// Registers the process for membarrier once (unless not allowed); call
/// before the threads that use light_fence start. Idempotent and thread-safe.
void enable_asymmetric_fences() noexcept;

/// Whether enable_asymmetric_fences may turn them on (default: yes). False
/// turns them off at once: full fences on both sides are always correct.
void allow_asymmetric_fences(bool allowed) noexcept;

inline void light_fence() noexcept {
#if defined(__SANITIZE_THREAD__)
  full_fence();
#else
  if (asymmetric_fences.load(std::memory_order_relaxed))
    std::atomic_signal_fence(std::memory_order_seq_cst);
  else
    full_fence();
#endif
}

/// The rare side's fence: pairs with light_fence on every other thread.
void heavy_fence() noexcept;

}  // namespace weft::detail
