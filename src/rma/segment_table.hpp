// Internal: one rank's registered segments, indexed by id.
//
// Lookups happen on every put and get, from any thread of any rank in the
// process (in-process targets are accessed directly), concurrently with
// registrations; they must be cheap and never lock. Ids are dense and never
// reused, so the table is a fixed directory of lazily allocated chunks:
// a lookup is two acquire loads. Entries are never freed before the table
// (deregistration only flips their state), so a pointer to one stays valid
// for the rank's lifetime.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "weft/rma.hpp"

namespace weft::rma::detail {

struct segment_entry {
  enum : std::uint8_t { unused = 0, live = 1, deregistered = 2 };
  std::atomic<std::uint8_t> state{unused};
  // Written once before the entry is published (state = live), then read-only.
  std::byte* base = nullptr;
  std::size_t size = 0;
  completion_queue* arrivals = nullptr;
};

class segment_table {
 public:
  static constexpr std::size_t chunk_bits = 10;
  static constexpr std::size_t chunk_size = std::size_t{1} << chunk_bits;
  static constexpr std::size_t max_chunks = 4096;  // 4M segments per rank
  static constexpr std::size_t capacity = chunk_size * max_chunks;

  segment_table() = default;
  ~segment_table();
  segment_table(const segment_table&) = delete;
  segment_table& operator=(const segment_table&) = delete;

  /// Registers a segment under the next id. Throws std::length_error when
  /// the table is full.
  segment_id add(std::byte* base, std::size_t size, completion_queue* arrivals);

  /// The id of the rank's symmetric heap (pgas layer), outside the ids
  /// register_memory hands out so that those still start at 0.
  static constexpr segment_id heap_id = ~segment_id{0};
  /// Makes [base, base + size) reachable as heap_id. Before any access.
  void set_heap(std::byte* base, std::size_t size) noexcept {
    heap_.base = base;
    heap_.size = size;
    heap_.state.store(segment_entry::live, std::memory_order_release);
  }

  /// The entry of `id`, or nullptr if `id` was never handed out. The caller
  /// checks `state` (live or deregistered). Lock-free.
  const segment_entry* find(segment_id id) const noexcept {
    if (id >= count_.load(std::memory_order_acquire)) return id == heap_id && heap_.size != 0 ? &heap_ : nullptr;
    const chunk* c = chunks_[id >> chunk_bits].load(std::memory_order_acquire);
    return &c->entries[id & (chunk_size - 1)];
  }

  /// Marks `id` deregistered; false if it is not live.
  bool remove(segment_id id) noexcept;

  /// Ids handed out so far.
  segment_id count() const noexcept { return count_.load(std::memory_order_acquire); }

 private:
  struct chunk {
    segment_entry entries[chunk_size];
  };
  std::mutex add_mutex_;              // registrations are rare; serialize them
  std::atomic<segment_id> count_{0};  // published after the entry is complete
  std::atomic<chunk*> chunks_[max_chunks] = {};
  segment_entry heap_;
};

}  // namespace weft::rma::detail
