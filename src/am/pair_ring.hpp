// Internal: a bounded ring of messages with one consumer (the destination
// rank) for one (source, destination rank) pair of the smp backend.
//
// Flag-in-slot layout: every slot carries its own sequence number; the
// message of ticket `pos` is published when its slot's seq == pos + 1. The
// consumer needs no atomic read-modify-write at all and drains a batch of
// published slots in one pass (batched consumption). No locks: a preempted
// thread never makes the other side sleep in the kernel, which a
// mutex-protected inbox did under load.
//
// A slot is free for ticket `pos` when seq == pos (the consumer sets it
// when it takes the message of the previous lap). Two ways to produce:
//  - try_push (several producer threads): tickets are claimed with one
//    CAS on `tail`.
//  - try_push_single (a ring with one producer thread: a worker's own):
//    plain loads and stores, no atomic read-modify-write. A locked
//    instruction per message made the sender wait for its previous store
//    to the consumer's cache line.
// Measured on 2 cores (bench_msg_rate, 8 B): a single producer that knew
// free slots from a cached copy of `head` (no load of the slot at all)
// raced ahead, filled the ring and left both sides fighting over the same
// lines: 14M msg/s against 19-20M with the slot check, which paces the
// producer to the consumer.
// The consumer prefetches the slot 8 ahead of the one it takes: with the
// producer ahead, that line is published already and arrives while the
// current message is handled (8 measured best among 4, 8, 16).
// Slots hold raw storage: constructing the message in place does not read
// the slot's old contents (a move-assignment would, to destroy them).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "am/message.hpp"

namespace weft::detail {

class pair_ring {
 public:
  explicit pair_ring(std::size_t capacity_pow2)
      : mask_(capacity_pow2 - 1), slots_(std::make_unique<slot[]>(capacity_pow2)) {
    for (std::size_t i = 0; i < capacity_pow2; ++i) slots_[i].seq.store(i, std::memory_order_relaxed);
  }
  pair_ring(const pair_ring&) = delete;
  pair_ring& operator=(const pair_ring&) = delete;
  ~pair_ring() {
    // Nothing is normally left (finalize waits for quiescence); messages
    // an aborted run left behind still release what they own.
    drain(~std::size_t{0}, [](am_message&&) {});
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
          publish(s, pos, m);
          return true;
        }
      } else if (dif < 0) {
        return false;  // the slot still holds an unconsumed message: full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  /// try_push for a ring whose only producer is the calling thread (always
  /// the same one); the two must never be mixed on one ring.
  bool try_push_single(am_message& m) noexcept {
    const std::uint64_t pos = tail_.load(std::memory_order_relaxed);
    if (slots_[pos & mask_].seq.load(std::memory_order_acquire) != pos) return false;  // full
    publish(slots_[pos & mask_], pos, m);
    tail_.store(pos + 1, std::memory_order_relaxed);
    return true;
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
      __builtin_prefetch(&slots_[(h + 8) & mask_]);
      am_message* stored = s.message();
      am_message m = std::move(*stored);
      std::destroy_at(stored);
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
    alignas(am_message) std::byte storage[sizeof(am_message)];
    am_message* message() noexcept { return std::launder(reinterpret_cast<am_message*>(storage)); }
  };
  static void publish(slot& s, std::uint64_t pos, am_message& m) noexcept {
    ::new (static_cast<void*>(s.storage)) am_message(std::move(m));
    s.seq.store(pos + 1, std::memory_order_release);
  }
  const std::uint64_t mask_;
  std::unique_ptr<slot[]> slots_;
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // producers
  // The consumer's position. Atomic only because pollers peek at it (ready())
  // while another thread of the rank may be the one draining.
  alignas(64) std::atomic<std::uint64_t> head_{0};
};

}  // namespace weft::detail
