// Internal: per-rank state of the layers above am, attached to the rank's
// communication context. A layer keeps what belongs to one rank (the
// collectives' mailboxes, the rma segment table, ...) in a type of its own
// and reaches it through layer_state<S>(comm):
//
//   struct coll_state {
//     explicit coll_state(rank_comm& c);   // created on first use
//     std::mutex mutex; ...
//   };
//   coll_state& st = layer_state<coll_state>(comm);
//
// The state lives exactly as long as the rank: created on first use (from a
// task or from a message handler), destroyed with the rank's context at
// finalize, after global quiescence, in the reverse order of creation.
#pragma once
#include <atomic>
#include <cstddef>
#include <mutex>
#include <type_traits>

namespace weft::detail {

struct rank_comm;

class layer_state_slots {
 public:
  /// How many state types a process may use (one per layer, with room).
  static constexpr std::size_t capacity = 8;

  layer_state_slots() = default;
  layer_state_slots(const layer_state_slots&) = delete;
  layer_state_slots& operator=(const layer_state_slots&) = delete;
  ~layer_state_slots();

  /// The state in `slot`, or nullptr before its first use.
  void* find(std::size_t slot) const noexcept { return slots_[slot].load(std::memory_order_acquire); }
  /// The state in `slot`, made by `make(c)` if there is none yet.
  void* create(std::size_t slot, rank_comm& c, void* (*make)(rank_comm&), void (*destroy)(void*));
  /// A slot number for a new state type (process-wide, once per type).
  static std::size_t new_slot() noexcept;

 private:
  std::atomic<void*> slots_[capacity] = {};
  void (*destroy_[capacity])(void*) = {};
  std::size_t order_[capacity] = {};  // slots in order of creation
  std::size_t created_ = 0;
  std::mutex create_mutex_;
};

}  // namespace weft::detail
