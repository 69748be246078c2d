#include "sched/fiber.hpp"

#include <pthread.h>

#include <utility>

#include "sched/stack_fault.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define WEFT_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define WEFT_TSAN 1
#endif

namespace weft::detail {

fiber* fiber_create(fiber_stack_carver& stacks) {
  const fiber_stack s = stacks.take();
  auto* f = new fiber;
  f->stack_lo = s.lo;
  f->stack_size = s.size;
  f->guard = s.guard;
  f->canary = s.canary;
#if WEFT_TSAN
  f->tsan = __tsan_create_fiber(0);
#endif
  return f;
}

void fiber_destroy(fiber* f) noexcept {
  if (f == nullptr) return;
  if (f->owns_stack) {
    release_fiber_stack({f->stack_lo, f->stack_size, f->guard, f->canary});
#if WEFT_TSAN
    __tsan_destroy_fiber(f->tsan);
#endif
  }
  delete f;
}

fiber* fiber_for_thread() {
  auto* f = new fiber;
  f->owns_stack = false;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    std::size_t size = 0;
    pthread_attr_getstack(&attr, &addr, &size);
    f->stack_lo = static_cast<char*>(addr);
    f->stack_size = size;
    pthread_attr_destroy(&attr);
  }
#if WEFT_TSAN
  f->tsan = __tsan_get_current_fiber();
#endif
  return f;
}

void fiber_prepare(fiber* f, void (*entry)(bctx::transfer_t)) noexcept {
#if WEFT_ASAN
  // A recycled stack still carries the redzone poison of the frames it was
  // abandoned with (they were never unwound): clear it before reuse.
  __asan_unpoison_memory_region(f->stack_lo, f->stack_size);
#endif
#if WEFT_TSAN
  // Likewise TSan's shadow call stack of a recycled fiber still holds the
  // frames it was abandoned in; reusing it would grow that stack by a few
  // frames per reuse until TSan's stack depot overflows. Start afresh, but
  // only every 64th reuse: making a TSan fiber is far more expensive than
  // reusing one (a yield loop that made one per reuse crawled), and 64
  // reuses leave a few hundred stale frames, far below the limit.
  constexpr unsigned tsan_reuses_per_fiber = 64;
  if (f->owns_stack && ++f->tsan_reuses >= tsan_reuses_per_fiber) {
    __tsan_destroy_fiber(f->tsan);
    f->tsan = __tsan_create_fiber(0);
    f->tsan_reuses = 0;
  }
#endif
  f->ctx = bctx::make_fcontext(f->stack_lo + f->stack_size, f->stack_size, entry);
}

bctx::transfer_t fiber_jump(fiber* from, fiber* to, void* data, bool forever) noexcept {
  if (from->canary != nullptr && *from->canary != stack_canary_value) report_stack_overflow(from->stack_size);
#if WEFT_ASAN
  __sanitizer_start_switch_fiber(forever ? nullptr : &from->asan_fake_stack, to->stack_lo, to->stack_size);
#else
  (void)from;
  (void)forever;
#endif
#if WEFT_TSAN
  __tsan_switch_to_fiber(to->tsan, 0);
#endif
  bctx::transfer_t t = bctx::jump_fcontext(to->ctx, data);
#if WEFT_ASAN
  __sanitizer_finish_switch_fiber(from->asan_fake_stack, nullptr, nullptr);
#endif
  return t;
}

void fiber_started(fiber* self) noexcept {
#if WEFT_ASAN
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
  (void)self;
}

fiber_pool::~fiber_pool() {
  while (free_ != nullptr) fiber_destroy(std::exchange(free_, free_->next_free));
}

fiber* fiber_pool::take() {
  if (free_ == nullptr) return fiber_create(stacks_);
  --count_;
  return std::exchange(free_, free_->next_free);
}

void fiber_pool::give(fiber* f) noexcept {
  if (count_ >= keep_) {
    fiber_destroy(f);
    return;
  }
  f->next_free = free_;
  free_ = f;
  ++count_;
}

}  // namespace weft::detail
