// Internal: a bounded ring of messages with one consumer (the destination
// rank) of the smp backend: one (source worker, destination rank) pair's
// own, or the destination's ring shared by every other sender.
//
// Flag-in-slot layout: every slot carries its own sequence number; the
// message of ticket `pos` is published when its slot's seq == pos + 1. The
// consumer needs no atomic read-modify-write at all and drains a batch of
// published slots in one pass (batched consumption). No locks: a preempted
// thread never makes the other side sleep in the kernel, which a
// mutex-protected inbox did under load.
//
// The consumer only reads slots. It frees them by advancing `head_` (its own
// line), which producers read only when the ring looks full to them. A slot
// line therefore travels once per message, producer to consumer. A
// consumer that marks each slot free by writing into it makes the
// producer's next lap load that line back from the consumer's cache: a miss
// per message that the sender waits for (the hottest instruction of the smp
// send path; docs/BENCHMARKS.md "smp 8 B message rate"). A single producer
// trusting a cached head while the consumer writes every slot is slower
// still (14M msg/s against 19-20M on the Xeon): the two then write the same
// lines. With the consumer only reading, the cached head is the faster one.
//
// Two ways to produce:
//  - try_push (several producer threads): tickets are claimed with one
//    CAS on `tail`, each message is published at once.
//  - try_write_single + publish (a ring with one producer thread: a
//    worker's own): plain loads and stores, no atomic read-modify-write (a
//    locked instruction per message made the sender wait for its previous
//    store to the consumer's cache line). Batched publication: a written
//    message stays invisible until publish(), which the transport calls
//    every few messages and at the worker's next scheduling point. An idle
//    consumer polls the slot the next message goes to; publishing one
//    message at a time, the producer took that line from it for every
//    message. A batch is published last slot first, so the consumer sees it
//    whole when its polled slot turns.
// Written but unpublished messages are not stranded when their producer
// runs a long task without a scheduling point: the consumer of a ring
// made for one producer thread may take them by its tail (drain with
// `unpublished`), which the transport does only after many empty polls,
// so the producer's tail line is not pulled on the common path.
// The consumer prefetches the slot 8 ahead of the one it takes: with the
// producer ahead, that line is published already and arrives while the
// current message is handled (8 measured best among 4, 8, 16).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "am/message.hpp"

namespace weft::detail {

class pair_ring {
 public:
  /// `single_writer`: only try_write_single will write to it (one thread),
  /// so the consumer may take written messages before they are published.
  explicit pair_ring(std::size_t capacity_pow2, bool single_writer = false)
      : mask_(capacity_pow2 - 1), single_writer_(single_writer), slots_(std::make_unique<slot[]>(capacity_pow2)) {}
  pair_ring(const pair_ring&) = delete;
  pair_ring& operator=(const pair_ring&) = delete;
  ~pair_ring() {
    // Nothing is normally left (finalize waits for quiescence); messages
    // an aborted run left behind still release what they own.
    if (single_producer_) publish();
    drain(~std::size_t{0}, [](am_message&&) {});
  }

  /// Moves `m` into the ring and publishes it; false (and `m` untouched)
  /// when the ring is full.
  bool try_push(am_message& m) noexcept {
    std::uint64_t pos = tail_.load(std::memory_order_relaxed);
    do {
      if (pos - head_.load(std::memory_order_acquire) > mask_) return false;  // full
    } while (!tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed));
    slot& s = slots_[pos & mask_];
    m.release_to(s.message);
    s.seq.store(pos + 1, std::memory_order_release);
    return true;
  }

  /// For a ring whose only producer is the calling thread (always the same
  /// one; never mixed with try_push on one ring): moves `m` into the ring
  /// without making it visible yet (publish() does); false (and `m`
  /// untouched) when the ring is full.
  bool try_write_single(am_message& m) noexcept {
    const std::uint64_t pos = tail_.load(std::memory_order_relaxed);
    if (pos - known_head_ > mask_) {
      known_head_ = head_.load(std::memory_order_acquire);
      if (pos - known_head_ > mask_) return false;  // full
    }
    m.release_to(slots_[pos & mask_].message);
    tail_.store(pos + 1, std::memory_order_release);  // drain(unpublished) reads the message after it
    single_producer_ = true;
    return true;
  }
  /// Single producer: messages written but not published yet.
  std::uint64_t unpublished() const noexcept { return tail_.load(std::memory_order_relaxed) - published_; }
  /// Single producer: makes every written message visible to the consumer,
  /// the last one first (the consumer polls the first).
  void publish() noexcept {
    const std::uint64_t end = tail_.load(std::memory_order_relaxed);
    // Tickets a lap or more behind were taken unpublished and their slots
    // written again: marking them now would overwrite the newer seq.
    const std::uint64_t lap = mask_ + 1;
    const std::uint64_t first = end - published_ > lap ? end - lap : published_;
    for (std::uint64_t p = end; p != first; --p) slots_[(p - 1) & mask_].seq.store(p, std::memory_order_release);
    published_ = end;
  }
  /// Single producer: whether the ring is on its producer's list of rings
  /// to publish (kept by the transport, to list each ring once).
  bool& listed() noexcept { return listed_; }

  /// Consumer only: whether the next message is published (one load).
  bool ready() const noexcept {
    const std::uint64_t h = head_.load(std::memory_order_relaxed);
    return slots_[h & mask_].seq.load(std::memory_order_acquire) == h + 1;
  }

  /// Consumer only: whether a single-writer ring holds messages written
  /// but not yet published (reads the producer's tail line).
  bool holds_unpublished() const noexcept {
    return single_writer_ && tail_.load(std::memory_order_acquire) != head_.load(std::memory_order_relaxed);
  }

  /// Consumer only: hands up to `max` published messages, in ticket order,
  /// to `f`; with `unpublished` (single-writer rings) also those written
  /// and not yet published.
  template <class F>
  std::size_t drain(std::size_t max, F&& f, bool unpublished = false) {
    std::size_t n = 0;
    std::uint64_t h = head_.load(std::memory_order_relaxed);
    const std::uint64_t written = unpublished && single_writer_ ? tail_.load(std::memory_order_acquire) : h;
    while (n < max) {
      const slot& s = slots_[h & mask_];
      if (h >= written && s.seq.load(std::memory_order_acquire) != h + 1) break;
      __builtin_prefetch(&slots_[(h + 8) & mask_]);
      am_message m = am_message::adopt(s.message);
      head_.store(++h, std::memory_order_release);  // the slot is free: done reading it
      ++n;
      f(std::move(m));
    }
    return n;
  }

 private:
  // A slot's seq is pos + 1 once the message of ticket pos is in it; any
  // other value (an older lap's, or 0) means not yet.
  struct alignas(64) slot {
    std::atomic<std::uint64_t> seq{0};
    am_message::raw message;
  };
  static_assert(sizeof(slot) == 64, "one slot per cache line");
  const std::uint64_t mask_;
  const bool single_writer_;
  std::unique_ptr<slot[]> slots_;
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // producers
  std::uint64_t known_head_ = 0;                     // single producer: a head_ seen earlier
  std::uint64_t published_ = 0;                      // single producer: tickets below are visible
  bool single_producer_ = false;
  bool listed_ = false;
  // The consumer's position: slots below it are free. Atomic because
  // producers read it (when the ring looks full) and pollers peek at it
  // (ready()) while another thread of the rank may be the one draining.
  alignas(64) std::atomic<std::uint64_t> head_{0};
};

}  // namespace weft::detail
