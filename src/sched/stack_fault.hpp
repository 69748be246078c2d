// A task that overflows its fiber stack faults in the guard page below it.
// The fatal-signal handler runs on an alternate stack (the fiber's own has
// no room left), asks whether the faulting address is such a guard page,
// and then names the overflow instead of reporting a bare SIGSEGV.
#pragma once
#include <cstddef>

namespace weft::detail {

/// An alternate signal stack for the calling thread for as long as the
/// object lives (sigaltstack), unless the thread has one already. Every
/// worker holds one.
class alt_signal_stack {
 public:
  alt_signal_stack() noexcept;
  ~alt_signal_stack();
  alt_signal_stack(const alt_signal_stack&) = delete;
  alt_signal_stack& operator=(const alt_signal_stack&) = delete;

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
};

/// The usable size of the stack whose guard page holds `address`, when that
/// stack is the fiber running on the calling worker; 0 otherwise.
/// Async-signal-safe.
std::size_t overflowed_fiber_stack(const void* address) noexcept;

}  // namespace weft::detail
