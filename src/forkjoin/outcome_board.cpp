// Spawned futures' outcomes in the owner's heap (outcome_board.hpp).
#include "forkjoin/outcome_board.hpp"

#include <atomic>
#include <cstring>
#include <new>

#include "forkjoin/state.hpp"
#include "pgas/one_sided_heap.hpp"

namespace weft::detail::fj {

namespace {

constexpr std::uint64_t state_pending = 0, state_value = 1, state_error = 2;
constexpr std::size_t word_bytes = 8;

std::size_t slot_bytes(std::uint32_t value_size) noexcept { return word_bytes + (value_size + 7u) / 8u * 8u; }

}  // namespace

std::uint64_t outcome_board::take(fj_rank& me, cell_base& c) {
  if (!checked_) {
    // The same answer for the whole job: the heaps' one-sided operations
    // exist, and some rank is on another node (remote_victims, set when the
    // deques were made).
    checked_ = true;
    usable_ = ::weft::pgas::detail::heap_one_sided(me.rank).ops != nullptr && !me.remote_victims.empty();
  }
  if (!usable_ || c.value_size > largest_value) return no_outcome_slot;
  const std::size_t n = slot_bytes(c.value_size);
  if (block_ < blocks_.size() && used_ + n > block_bytes) {
    ++block_;
    used_ = 0;
  }
  if (block_ == blocks_.size()) {
    if (blocks_.size() * block_bytes >= most_bytes) return no_outcome_slot;
    try {
      blocks_.push_back(detail::pgas::allocate_local(block_bytes));
    } catch (const std::bad_alloc&) {
      return no_outcome_slot;  // the program's own blocks come first
    }
    used_ = 0;
  }
  const std::uint64_t at = blocks_[block_] + used_;
  used_ += n;
  auto* slot = detail::pgas::address_of(me.rank, at, false);
  // A slot may be reused from an earlier root_exec: pending again before
  // the future that names it leaves this task.
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(slot)).store(state_pending,
                                                                                 std::memory_order_relaxed);
  c.board = slot;
  return at;
}

void outcome_board::reset(fj_rank& me) {
  for (std::size_t k = 1; k < blocks_.size(); ++k) detail::pgas::free_local(me.rank, blocks_[k]);
  if (blocks_.size() > 1) blocks_.erase(blocks_.begin() + 1, blocks_.end());
  block_ = 0;
  used_ = 0;
}

void fill_slot(const cell_base& c) noexcept {
  std::uint64_t word = state_error;
  if (!c.error) {
    if (c.value_size != 0) std::memcpy(c.board + word_bytes, c.value, c.value_size);
    word = state_value;
  }
  word |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(c.ran_on)) << 32;
  // Released after the value: a reader that sees the word by an atomic
  // then reads a complete value.
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(c.board)).store(word, std::memory_order_release);
}

bool read_outcome(fj_rank& me, int owner, std::uint64_t offset, void* value, std::uint32_t size,
                  int& ran_on) noexcept {
  const ::weft::pgas::detail::one_sided_heap h = ::weft::pgas::detail::heap_one_sided(me.rank);
  if (h.ops == nullptr) return false;
  // The word by an atomic (adding 0), as a thief reads a deque's bottom:
  // it is the owner's latest store, which follows the value's bytes.
  const std::uint64_t word = h.ops->fetch_add(owner, h.key, offset, 0);
  if ((word & 0xffffffffu) != state_value) return false;
  if (size != 0) {
    h.ops->get(owner, h.key, offset + word_bytes, value, size);
    h.ops->flush(owner);
  }
  ran_on = static_cast<int>(static_cast<std::uint32_t>(word >> 32));
  return true;
}

}  // namespace weft::detail::fj
