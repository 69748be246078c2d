// Internal: a bounded multi-producer, single-consumer ring of messages for
// one (source rank, destination rank) pair of the smp backend.
//
// Flag-in-slot layout: every slot carries its own sequence number, which
// says whether the slot is free for the producer holding ticket `pos`
// (seq == pos) or holds the message of ticket `pos` for the consumer
// (seq == pos + 1). Producers (the source rank's threads) claim tickets with
// one CAS on `tail`; the consumer needs no atomic read-modify-write at all and
// drains a batch of published slots in one pass (batched consumption). No locks:
// a preempted thread never makes the other side sleep in the kernel, which a
// mutex-protected inbox did under load.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "am/message.hpp"

namespace weft::detail {

class pair_ring {
 public:
  explicit pair_ring(std::size_t capacity_pow2)
      : mask_(capacity_pow2 - 1), slots_(std::make_unique<slot[]>(capacity_pow2)) {
    for (std::size_t i = 0; i < capacity_pow2; ++i) slots_[i].seq.store(i, std::memory_order_relaxed);
  }

  /// Moves `m` into the ring; false (and `m` untouched) when the ring is full.
  bool try_push(am_message& m) noexcept {
    std::uint64_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      slot& s = slots_[pos & mask_];
      const std::uint64_t seq = s.seq.load(std::memory_order_acquire);
      const auto dif = static_cast<std::int64_t>(seq - pos);
      if (dif == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          s.msg = std::move(m);
          s.seq.store(pos + 1, std::memory_order_release);  // publish
          return true;
        }
      } else if (dif < 0) {
        return false;  // the slot still holds an unconsumed message: full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  /// Consumer only: whether the next message is published (one load).
  bool ready() const noexcept {
    const std::uint64_t h = head_.load(std::memory_order_relaxed);
    return slots_[h & mask_].seq.load(std::memory_order_acquire) == h + 1;
  }

  /// Consumer only: hands up to `max` published messages, in ticket order,
  /// to `f`.
  template <class F>
  std::size_t drain(std::size_t max, F&& f) {
    std::size_t n = 0;
    std::uint64_t h = head_.load(std::memory_order_relaxed);
    while (n < max) {
      slot& s = slots_[h & mask_];
      if (s.seq.load(std::memory_order_acquire) != h + 1) break;
      am_message m = std::move(s.msg);  // leaves `large` null: nothing to reset
      s.seq.store(h + mask_ + 1, std::memory_order_release);  // free for the next lap
      head_.store(++h, std::memory_order_relaxed);
      ++n;
      f(std::move(m));
    }
    return n;
  }

 private:
  struct alignas(64) slot {
    std::atomic<std::uint64_t> seq{0};
    am_message msg;
  };
  const std::uint64_t mask_;
  std::unique_ptr<slot[]> slots_;
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // producers
  // The consumer's position. Atomic only because pollers peek at it (ready())
  // while another thread of the rank may be the one draining.
  alignas(64) std::atomic<std::uint64_t> head_{0};
};

}  // namespace weft::detail
