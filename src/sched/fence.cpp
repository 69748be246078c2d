// The asymmetric fence pair of fence.hpp on Linux membarrier(2).
#include "sched/fence.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace weft::detail {

std::atomic<bool> asymmetric_fences{false};

namespace {
#if defined(__linux__) && !defined(__SANITIZE_THREAD__)
long membarrier(int cmd) noexcept { return syscall(SYS_membarrier, cmd, 0U, 0); }
#endif
}  // namespace

void enable_asymmetric_fences() noexcept {
#if defined(__linux__) && !defined(__SANITIZE_THREAD__)
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("WEFT_ASYMMETRIC_FENCES");
    if (env != nullptr && std::strcmp(env, "0") == 0) return;
    const long supported = membarrier(MEMBARRIER_CMD_QUERY);
    if (supported < 0 || (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
    if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) return;
    asymmetric_fences.store(true, std::memory_order_seq_cst);
  });
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
