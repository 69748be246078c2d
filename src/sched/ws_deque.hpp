// Chase–Lev work-stealing deque (the C11 formulation of Lê et al., PPoPP'13):
// the owner pushes and pops at the bottom without atomic RMW in the common
// case; thieves take from the top with one CAS. Element slots are atomics
// with release/acquire so ThreadSanitizer sees the hand-over of the task.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "sched/fence.hpp"

namespace weft::detail {

template <class T>
class ws_deque {
  static_assert(std::is_pointer_v<T>);

 public:
  explicit ws_deque(std::int64_t log2_capacity = 10)
      : array_(new ring(std::int64_t{1} << log2_capacity)) {
    retired_.emplace_back(array_.load(std::memory_order_relaxed));
  }
  ws_deque(const ws_deque&) = delete;
  ws_deque& operator=(const ws_deque&) = delete;

  /// Owner only.
  void push(T x) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    std::int64_t t = top_.load(std::memory_order_acquire);
    ring* a = array_.load(std::memory_order_relaxed);
    if (b - t > a->mask) a = grow(a, b, t);
    a->slot(b).store(x, std::memory_order_release);
    bottom_.store(b + 1, std::memory_order_release);
  }

  /// Owner only: newest element, or nullptr.
  T pop() {
    std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    ring* a = array_.load(std::memory_order_relaxed);
    bottom_.store(b, std::memory_order_relaxed);
    full_fence();
    std::int64_t t = top_.load(std::memory_order_relaxed);
    if (t > b) {  // empty
      bottom_.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    T x = a->slot(b).load(std::memory_order_acquire);
    if (t == b) {  // last element: race the thieves for it
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
        x = nullptr;
      bottom_.store(b + 1, std::memory_order_relaxed);
    }
    return x;
  }

  /// Any thread: oldest element, or nullptr (empty or lost a race).
  T steal() {
    std::int64_t t = top_.load(std::memory_order_acquire);
    full_fence();
    std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return nullptr;
    ring* a = array_.load(std::memory_order_acquire);
    T x = a->slot(t).load(std::memory_order_acquire);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      return nullptr;
    return x;
  }

  /// Approximate, any thread.
  bool empty() const {
    return bottom_.load(std::memory_order_acquire) <= top_.load(std::memory_order_acquire);
  }

 private:
  struct ring {
    explicit ring(std::int64_t cap) : mask(cap - 1), slots(new std::atomic<T>[cap]) {}
    std::atomic<T>& slot(std::int64_t i) { return slots[i & mask]; }
    std::int64_t mask;
    std::unique_ptr<std::atomic<T>[]> slots;
  };
  ring* grow(ring* old, std::int64_t b, std::int64_t t) {
    auto* a = new ring((old->mask + 1) * 2);
    for (std::int64_t i = t; i < b; ++i)
      a->slot(i).store(old->slot(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
    retired_.emplace_back(a);  // thieves may still read the old ring: keep it
    array_.store(a, std::memory_order_release);
    return a;
  }

  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<ring*> array_;
  std::vector<std::unique_ptr<ring>> retired_;
};

}  // namespace weft::detail
