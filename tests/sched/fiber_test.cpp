// Fiber stacks (src/sched/fiber.*): a stack handed back while frames are
// still live on it must leave nothing behind that affects the next mapping at
// its address. Under ASan this is what the test checks: the abandoned frame's
// redzones sit in ASan's shadow, munmap does not clear them, and a later
// mapping at the same address (CI saw UCX's shared-memory FIFO land there)
// then reports every write into it as a stack-buffer-underflow.
#include <gtest/gtest.h>
#include <sys/mman.h>

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

TEST(Fiber, DestroyedStackLeavesNoPoisonForTheNextMapping) {
  g_thread = wd::fiber_for_thread();
  g_fiber = wd::fiber_create(64 * 1024);
  wd::fiber_prepare(g_fiber, &entry);
  wd::fiber_jump(g_thread, g_fiber, nullptr, false);

  char* const lo = g_fiber->stack_lo;
  const std::size_t size = g_fiber->stack_size;
  wd::fiber_destroy(g_fiber);
  g_fiber = nullptr;

  // Map fresh memory exactly where the stack was and write all of it.
  void* p = mmap(lo, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(p, static_cast<void*>(lo)) << "the old stack's address was taken before the test could map it";
  std::memset(p, 0x5a, size);  // ASan checks the whole range against its shadow
  EXPECT_EQ(static_cast<unsigned char*>(p)[size - 1], 0x5a);
  munmap(p, size);
  wd::fiber_destroy(g_thread);
}
