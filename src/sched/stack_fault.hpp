// A task that overflows its fiber stack faults in the guard page below it
// (or below its chunk of stacks, see fiber_stack.hpp). The fatal-signal
// handler runs on an alternate stack (the fiber's own has no room left),
// asks whether the faulting address is such a guard page, and then names
// the overflow instead of reporting a bare SIGSEGV. A stack with a canary
// instead of a guard page right below is checked when its fiber leaves.
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

/// The usable size of the stack of the fiber running on the calling worker
/// when `address` is in the guard page that fiber overflows into; 0
/// otherwise. Async-signal-safe.
std::size_t overflowed_fiber_stack(const void* address) noexcept;

/// Ends the job: a task ran past the end of its `stack_size`-byte stack
/// (its canary was overwritten).
[[noreturn]] void report_stack_overflow(std::size_t stack_size) noexcept;

}  // namespace weft::detail
