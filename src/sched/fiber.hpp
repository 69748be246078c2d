// Stackful fibers on Boost.Context's fcontext: guard-paged stacks (carved
// from large mappings, see fiber_stack.hpp) kept in a per-worker pool, a raw jump with ASan/TSan annotations so both sanitizers
// follow the stack switches.
#pragma once
#include <boost/context/detail/fcontext.hpp>
#include <cstddef>

#include "sched/fiber_stack.hpp"
#include "weft/detail/task.hpp"

namespace weft::detail {

namespace bctx = boost::context::detail;

struct fiber {
  char* stack_lo = nullptr;  // lowest usable byte
  std::size_t stack_size = 0;
  const char* guard = nullptr;           // the no-access page an overflow faults in first
  std::uint64_t* canary = nullptr;       // checked when the fiber leaves (no guard right below)
  bctx::fcontext_t ctx = nullptr;  // where to jump to resume this fiber
  task_base resume;                // queued to resume it (see scheduler)
  void* tsan = nullptr;            // ThreadSanitizer's fiber handle
  unsigned tsan_reuses = 0;        // times prepared since `tsan` was made
  void* asan_fake_stack = nullptr;
  fiber* next_free = nullptr;
  bool owns_stack = true;          // false for a thread's own stack
  int held = 0;                    // see held_by_current_task()
};

/// A fiber on a stack from `stacks`; throws fiber_stack_error when the
/// kernel refuses the memory.
fiber* fiber_create(fiber_stack_carver& stacks);
void fiber_destroy(fiber* f) noexcept;
/// Describes the calling thread's own stack as a fiber (to jump back to it).
fiber* fiber_for_thread();

/// (Re)starts `f` at `entry`; the fiber must not be running.
void fiber_prepare(fiber* f, void (*entry)(bctx::transfer_t)) noexcept;

/// Jumps from `from` (the running fiber) to `to`, passing `data`. Returns
/// when something jumps back to `from`; `forever` says `from` will never be
/// resumed (its stack goes back to a pool). The returned transfer carries
/// the context of whoever jumped to us. A `from` whose canary was
/// overwritten ran past its stack's end: the job ends reporting that.
bctx::transfer_t fiber_jump(fiber* from, fiber* to, void* data, bool forever) noexcept;

/// First thing a fiber's entry function must call.
void fiber_started(fiber* self) noexcept;

/// Bytes left below the current stack pointer on fiber `f`.
inline std::size_t stack_left(const fiber* f) noexcept {
  char probe;
  char* sp = &probe;
  return sp > f->stack_lo ? static_cast<std::size_t>(sp - f->stack_lo) : 0;
}

/// Small free list of fibers owned by one worker.
class fiber_pool {
 public:
  explicit fiber_pool(std::size_t stack_size, std::size_t keep = 64) : stacks_(stack_size), keep_(keep) {}
  ~fiber_pool();
  fiber_pool(const fiber_pool&) = delete;
  fiber_pool& operator=(const fiber_pool&) = delete;
  fiber* take();
  void give(fiber* f) noexcept;
  std::size_t stack_size() const noexcept { return stacks_.stack_size(); }

 private:
  fiber* free_ = nullptr;
  std::size_t count_ = 0;
  fiber_stack_carver stacks_;
  std::size_t keep_;
};

}  // namespace weft::detail
