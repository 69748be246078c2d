// Fiber stacks (src/sched/fiber.*): a stack handed back while frames are
// still live on it must leave nothing behind that affects the next use of
// its addresses. Under ASan this is what the test checks: the abandoned
// frame's redzones sit in ASan's shadow, and whoever reuses the range (the
// next fiber, or a mapping: CI saw UCX's shared-memory FIFO land on a
// stack's old address) would see every write into it reported as a
// stack-buffer-underflow.
#include <gtest/gtest.h>
#include <cstring>

#include "sched/fiber.hpp"

namespace wd = weft::detail;

namespace {

wd::fiber* g_thread = nullptr;
wd::fiber* g_fiber = nullptr;

[[gnu::noinline]] void touch(volatile char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<char>(i);
}

// Leaves the fiber from inside a frame whose locals ASan guards with
// redzones, and never comes back: the frame is abandoned, not unwound.
[[gnu::noinline]] void leave_from_a_frame_with_locals() {
  volatile char a[200];
  volatile char b[300];
  touch(a, sizeof a);
  touch(b, sizeof b);
  wd::fiber_jump(g_fiber, g_thread, nullptr, true);
  __builtin_unreachable();
}

void entry(wd::bctx::transfer_t t) {
  wd::fiber_started(g_fiber);
  g_thread->ctx = t.fctx;
  leave_from_a_frame_with_locals();
}

}  // namespace

TEST(Fiber, DestroyedStackLeavesNoPoisonForItsNextUse) {
  g_thread = wd::fiber_for_thread();
  wd::fiber_stack_carver stacks(64 * 1024);
  g_fiber = wd::fiber_create(stacks);
  wd::fiber_prepare(g_fiber, &entry);
  wd::fiber_jump(g_thread, g_fiber, nullptr, false);

  char* const lo = g_fiber->stack_lo;
  const std::size_t size = g_fiber->stack_size;
  wd::fiber_destroy(g_fiber);
  g_fiber = nullptr;

  // The next stack of that size is the same range: write all of it.
  const wd::fiber_stack again = stacks.take();
  ASSERT_EQ(again.lo, lo) << "a released stack is reused first";
  ASSERT_EQ(again.size, size);
  std::memset(again.lo, 0x5a, size);  // ASan checks the whole range against its shadow
  EXPECT_EQ(static_cast<unsigned char*>(static_cast<void*>(again.lo))[size - 1], 0x5a);
  wd::release_fiber_stack(again);
  wd::fiber_destroy(g_thread);
}
