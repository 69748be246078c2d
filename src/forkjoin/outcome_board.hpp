// Internal: spawned futures' outcomes, readable by ranks of other nodes
// without the owner's CPU. A rank that spawns while some rank is on another
// node, and the transport has one-sided operations, gives each future a
// slot in its own heap besides the cell: an 8-byte word (state in the low
// half, the rank that ran the task in the high half) and the value after
// it. The owner fills the slot when the cell is done; a rank of another
// node reads the word by an atomic and, once it says "value", the value by
// a get. Anything else (still running, an error, no slot) is asked by
// message as before. Without it a stolen task's get() of a future made on
// another node waits until that rank's worker ends its current task to
// answer (docs/FORKJOIN.md, "Across nodes").
//
// Slots are taken from 64 KiB blocks of the rank's heap, in order, and all
// given back when the root_exec ends (as the cells are); at most
// `most_bytes` of heap per rank, then spawns go without a slot.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/forkjoin/detail.hpp"

namespace weft::detail::fj {

struct fj_rank;

class outcome_board {
 public:
  static constexpr std::size_t block_bytes = std::size_t{64} << 10;
  static constexpr std::size_t most_bytes = std::size_t{16} << 20;
  static constexpr std::uint32_t largest_value = 1024;

  /// A slot for `c` (its owner is the calling rank), or no_outcome_slot.
  /// Call with the rank's cells_mutex held.
  std::uint64_t take(fj_rank& me, cell_base& c);
  /// The root_exec ended: every slot is free again; blocks beyond the
  /// first go back to the heap. Call with the rank's cells_mutex held.
  void reset(fj_rank& me);

 private:
  std::vector<std::uint64_t> blocks_;  // heap offsets
  std::size_t block_ = 0;              // the one slots are taken from
  std::size_t used_ = 0;               // bytes of it taken
  bool checked_ = false, usable_ = false;
};

/// Fills c's slot (c.board) from the cell.
void fill_slot(const cell_base& c) noexcept;

/// Every way a cell gets its outcome ends here: who ran it, its slot (if
/// it has one) filled, then done.
inline void mark_done(cell_base& c, int ran_on) noexcept {
  c.ran_on = ran_on;
  if (c.board != nullptr) fill_slot(c);
  c.done.set();
}

/// Reads the outcome of `owner`'s slot at `offset` one-sidedly: true, with
/// the value in `value` and the running rank in `ran_on`, when it holds a
/// value; false when it is not there yet or is an error (ask by message).
bool read_outcome(fj_rank& me, int owner, std::uint64_t offset, void* value, std::uint32_t size,
                  int& ran_on) noexcept;

}  // namespace weft::detail::fj
