#include "rma/segment_table.hpp"

#include <stdexcept>
#include <string>

namespace weft::rma::detail {

segment_table::~segment_table() {
  for (auto& c : chunks_) delete c.load(std::memory_order_relaxed);
}

segment_id segment_table::add(std::byte* base, std::size_t size, completion_queue* arrivals) {
  std::lock_guard lock(add_mutex_);
  const segment_id id = count_.load(std::memory_order_relaxed);
  if (id >= capacity)
    throw std::length_error("weft::rma::register_memory: more than " + std::to_string(capacity) +
                            " segments on one rank");
  auto& slot = chunks_[id >> chunk_bits];
  chunk* c = slot.load(std::memory_order_relaxed);
  if (c == nullptr) {
    c = new chunk;
    slot.store(c, std::memory_order_release);
  }
  segment_entry& e = c->entries[id & (chunk_size - 1)];
  e.base = base;
  e.size = size;
  e.arrivals = arrivals;
  e.state.store(segment_entry::live, std::memory_order_release);
  count_.store(id + 1, std::memory_order_release);  // publishes the entry to find()
  return id;
}

bool segment_table::remove(segment_id id) noexcept {
  const segment_entry* e = find(id);
  if (e == nullptr) return false;
  auto& state = const_cast<segment_entry*>(e)->state;
  std::uint8_t expected = segment_entry::live;
  return state.compare_exchange_strong(expected, segment_entry::deregistered, std::memory_order_acq_rel);
}

}  // namespace weft::rma::detail
