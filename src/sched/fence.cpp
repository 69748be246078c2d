// The asymmetric fence pair of fence.hpp on Linux membarrier(2).
#include "sched/fence.hpp"

#include <mutex>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace weft::detail {

std::atomic<bool> asymmetric_fences{false};

namespace {
std::atomic<bool> fences_allowed{true};
#if defined(__linux__) && !defined(__SANITIZE_THREAD__)
long membarrier(int cmd) noexcept { return syscall(SYS_membarrier, cmd, 0U, 0); }
#endif
}  // namespace

void allow_asymmetric_fences(bool allowed) noexcept {
  fences_allowed.store(allowed, std::memory_order_seq_cst);
  if (!allowed) asymmetric_fences.store(false, std::memory_order_seq_cst);
}

void enable_asymmetric_fences() noexcept {
#if defined(__linux__) && !defined(__SANITIZE_THREAD__)
  if (!fences_allowed.load(std::memory_order_seq_cst)) return;
  static std::once_flag once;
  static bool registered = false;
  std::call_once(once, [] {
    const long supported = membarrier(MEMBARRIER_CMD_QUERY);
    if (supported < 0 || (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
    registered = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  });
  if (registered) asymmetric_fences.store(true, std::memory_order_seq_cst);
#endif
}

void heavy_fence() noexcept {
#if defined(__linux__) && !defined(__SANITIZE_THREAD__)
  if (asymmetric_fences.load(std::memory_order_relaxed)) {
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
    // Cannot fail once registered; should it, fall through: light_fence
    // callers are then unprotected, so make the failure loud.
    std::abort();
  }
#endif
  full_fence();
}

}  // namespace weft::detail
