// Internal: the spin-wait hint, shared by the scheduler and the spin locks.
#pragma once

namespace weft::detail {

/// A spin-wait hint to the CPU (pause / yield).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace weft::detail
