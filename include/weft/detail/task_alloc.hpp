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

/// Alignment of every block task_alloc returns.
inline constexpr std::size_t task_alloc_alignment = 16;

/// A standard allocator over task_alloc (for std::allocate_shared).
template <class T>
struct pool_allocator {
  using value_type = T;
  pool_allocator() noexcept = default;
  template <class U>
  pool_allocator(const pool_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= task_alloc_alignment);
    return static_cast<T*>(task_alloc(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept { task_free(p); }
  template <class U>
  bool operator==(const pool_allocator<U>&) const noexcept { return true; }
};

}  // namespace weft::detail
