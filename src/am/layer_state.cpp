#include "am/layer_state.hpp"

#include <cstdio>
#include <cstdlib>

namespace weft::detail {

layer_state_slots::~layer_state_slots() {
  while (created_ > 0) {
    const std::size_t slot = order_[--created_];
    destroy_[slot](slots_[slot].load(std::memory_order_relaxed));
  }
}

void* layer_state_slots::create(std::size_t slot, rank_comm& c, void* (*make)(rank_comm&), void (*destroy)(void*)) {
  std::lock_guard lock(create_mutex_);
  if (void* s = slots_[slot].load(std::memory_order_relaxed)) return s;
  void* s = make(c);
  destroy_[slot] = destroy;
  order_[created_++] = slot;
  slots_[slot].store(s, std::memory_order_release);
  return s;
}

std::size_t layer_state_slots::new_slot() noexcept {
  static std::atomic<std::size_t> next{0};
  const std::size_t slot = next.fetch_add(1, std::memory_order_relaxed);
  if (slot >= capacity) {
    std::fprintf(stderr, "weft: more than %zu per-rank layer state types\n", capacity);
    std::abort();
  }
  return slot;
}

}  // namespace weft::detail
