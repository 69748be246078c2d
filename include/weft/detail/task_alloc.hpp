// Internal: allocator for task and future-state objects. A task is often
// created on one worker and freed on another; a per-thread heap with a
// lock-free "remote free" list returns such blocks to their owner without
// the global allocator's locks. Objects opt in by inheriting `pooled`.
#pragma once
#include <cstddef>

namespace weft::detail {

void* task_alloc(std::size_t bytes);
void task_free(void* p) noexcept;

struct pooled {
  static void* operator new(std::size_t n) { return task_alloc(n); }
  static void operator delete(void* p) noexcept { task_free(p); }
};

}  // namespace weft::detail
