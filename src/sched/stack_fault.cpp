#include "sched/stack_fault.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "sched/scheduler.hpp"

namespace weft::detail {

namespace {
/// Room for the report and for a sanitizer's handler that runs after it.
constexpr std::size_t alt_stack_bytes = 64 * 1024;
}  // namespace

alt_signal_stack::alt_signal_stack() noexcept {
  // A thread that has one already keeps it (AddressSanitizer gives every
  // thread its own, and unmaps whatever is installed when the thread ends).
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0) return;
  void* p = mmap(nullptr, alt_stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;  // no report on overflow, nothing else lost
  stack_t ss{};
  ss.ss_sp = p;
  ss.ss_size = alt_stack_bytes;
  if (sigaltstack(&ss, nullptr) != 0) {
    munmap(p, alt_stack_bytes);
    return;
  }
  base_ = p;
  bytes_ = alt_stack_bytes;
}

alt_signal_stack::~alt_signal_stack() {
  if (base_ == nullptr) return;
  stack_t off{};
  off.ss_flags = SS_DISABLE;
  sigaltstack(&off, nullptr);
  munmap(base_, bytes_);
}

std::size_t overflowed_fiber_stack(const void* address) noexcept {
  const worker* w = current_worker();
  if (w == nullptr || w->current == nullptr || !w->current->owns_stack) return 0;
  const fiber* f = w->current;
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const char* a = static_cast<const char*>(address);
  if (f->guard == nullptr || a < f->guard || a >= f->guard + page) return 0;
  return f->stack_size;
}

void report_stack_overflow(std::size_t stack_size) noexcept {
  // The same words as the guard-page report (failure_report.cpp).
  char msg[160];
  std::snprintf(msg, sizeof msg, "stack overflow in a task (fiber stacks are %zu KiB; --weft:stack sets it)",
                stack_size / 1024);
  if (fatal_handler != nullptr) fatal_handler(msg);
  std::fprintf(stderr, "weft: %s\n", msg);
  std::_Exit(1);
}

}  // namespace weft::detail
