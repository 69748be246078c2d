// Internal: one worker's deque of forked tasks, in its rank's symmetric heap
// so that ranks of the same node take from it through shared memory,
// without the owner's help (the owner may be busy in a long task).
//
// The THE protocol (Frigo, Leiserson and Randall, Cilk-5): the owner pushes
// and pops at the bottom without a lock, thieves take the top under a lock,
// and owner and thief settle a race for the last task through the lock.
// Everything in it is plain data and lock-free atomics, so it works the
// same between threads of one process and between processes mapping the
// same pages. Entries carry their packet's bytes; a thief copies one out
// under the lock and runs the copy.
//
// Thieves that cannot map the deque (ranks of other nodes) run the same
// protocol with the transport's one-sided operations (remote_steal.cpp):
// the lock is a 64-bit word they take with a remote compare-and-swap, they
// claim with a remote fetch-and-add on top and read bottom and the entry
// with gets. So the words a thief touches are 64-bit, 8-byte aligned, at
// fixed offsets (layout below), and an entry is self-contained bytes: the
// packet, the task record's offset from the executable's anchor, the
// forking rank and its cell (a number only that rank interprets).
//
// Every entry names the root_exec it was forked in; a thief takes only
// entries of the root it is inside itself (docs/FORKJOIN.md, "Roots back to
// back"). It looks at the oldest entry only: a deque holds the entries of
// one root (its owner's rank forks only in the root it is in, and a root's
// entries are all gone when it ends).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include <sched.h>

#include "sched/cpu_relax.hpp"
#include "weft/forkjoin/detail.hpp"

namespace weft::detail::fj {

struct entry_header {
  std::uint64_t code = 0;   // the task_record's offset from the anchor
  std::uint64_t cell = 0;   // the cell_base* the outcome goes to, in the owner's process
  std::int32_t owner = -1;  // the rank that forked it (owns `cell`)
  std::uint32_t size = 0;   // payload bytes
  std::uint64_t root = 0;   // sequence number of the root_exec it belongs to (0: forked outside one)
};

struct task_entry {
  entry_header h;
  alignas(16) std::byte payload[payload_capacity];
};
static_assert(sizeof(task_entry) == 256);

class steal_deque {
 public:
  static constexpr std::int64_t capacity = 1024;

  /// Owner: queues a task; false when full (the caller runs it itself).
  bool push(const entry_header& h, const void* payload) noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    // Leaves one slot free: a thief may still be copying slot top - 1.
    if (b - top_.load(std::memory_order_acquire) >= capacity - 1) return false;
    task_entry& e = slots_[b % capacity];
    e.h = h;
    std::memcpy(e.payload, payload, h.size);
    bottom_.store(b + 1, std::memory_order_release);
    return true;
  }

  /// Owner: the newest task's cell, or 0 when empty (a hint, no claim).
  std::uint64_t newest_cell() const noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    if (b < top_.load(std::memory_order_acquire)) return 0;
    return slots_[b % capacity].h.cell;
  }

  /// Owner: removes the newest task; copies it to `out` when `out` is set.
  bool pop(task_entry* out) noexcept {
    std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    if (b < top_.load(std::memory_order_relaxed)) return false;  // empty (thieves only shrink it)
    // Store then load, both seq_cst: a thief claiming this task either
    // sees the lower bottom or is seen here (the pair with steal()).
    bottom_.store(b, std::memory_order_seq_cst);
    if (top_.load(std::memory_order_seq_cst) > b) {
      // A thief may have claimed it: settle under the lock.
      bottom_.store(b + 1, std::memory_order_relaxed);
      lock();
      b = bottom_.load(std::memory_order_relaxed) - 1;
      bottom_.store(b, std::memory_order_relaxed);
      if (top_.load(std::memory_order_relaxed) > b) {
        bottom_.store(b + 1, std::memory_order_relaxed);
        unlock();
        return false;
      }
      unlock();
    }
    if (out != nullptr) copy(slots_[b % capacity], *out);
    return true;
  }

  /// Thief inside root `root`: takes the oldest task into `out`, if it
  /// belongs to that root.
  bool steal(task_entry& out, std::uint64_t root) noexcept {
    // Look before locking: most attempts find an empty deque, and they
    // should not bounce its lines between the owner's core and the thief's.
    if (top_.load(std::memory_order_acquire) >= bottom_.load(std::memory_order_acquire)) return false;
    if (!try_lock()) return false;  // another thief is at it: try elsewhere
    const std::int64_t t = top_.load(std::memory_order_relaxed);
    // Claim, then look (the pair with pop()). It is also a release: an
    // owner that sees a later top reuses slots that earlier thieves copied
    // before they unlocked (the lock, then this store, order it).
    top_.store(t + 1, std::memory_order_seq_cst);
    // (seq_cst, so also an acquire: the slot may hold a task pushed after
    // the look above.)
    if (t >= bottom_.load(std::memory_order_seq_cst)) {
      top_.store(t, std::memory_order_relaxed);
      unlock();
      return false;
    }
    if (slots_[t % capacity].h.root != root) {
      // A task of another root (the thief's rank is still leaving an
      // earlier root, or already in a later one): give it back. An owner
      // racing for it waits on the lock; one that pops it without (it sees
      // this top) and reuses the slot must do so after the read above:
      // release.
      top_.store(t, std::memory_order_release);
      unlock();
      return false;
    }
    copy(slots_[t % capacity], out);
    unlock();
    return true;
  }

  bool looks_empty() const noexcept {
    return top_.load(std::memory_order_acquire) >= bottom_.load(std::memory_order_acquire);
  }

  // Where a remote thief finds the words and the slots, in bytes from the
  // deque's start (offsetof: the class is standard-layout).
  static constexpr std::size_t top_offset() noexcept { return offsetof(steal_deque, top_); }
  static constexpr std::size_t bottom_offset() noexcept { return offsetof(steal_deque, bottom_); }
  static constexpr std::size_t lock_offset() noexcept { return offsetof(steal_deque, lock_); }
  static constexpr std::size_t slot_offset(std::int64_t i) noexcept {
    return offsetof(steal_deque, slots_) + sizeof(task_entry) * static_cast<std::size_t>(i % capacity);
  }
  /// The lock word's values: free, or held by a thief or owner of this
  /// process (a remote thief writes its own, see remote_steal.cpp).
  static constexpr std::uint64_t unlocked = 0, locked_here = 1;

 private:
  // The lock: a test-and-test-and-set on a 64-bit word (remote thieves take
  // it with compare-and-swap, which works on 64-bit words).
  bool try_lock() noexcept {
    std::uint64_t free = unlocked;
    return lock_.load(std::memory_order_relaxed) == unlocked &&
           lock_.compare_exchange_strong(free, locked_here, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void lock() noexcept {
    // Every 64th round gives the core away: the holder may be descheduled
    // (oversubscribed ranks).
    for (unsigned round = 1; !try_lock(); ++round) round % 64 == 0 ? static_cast<void>(sched_yield()) : cpu_relax();
  }
  void unlock() noexcept { lock_.store(unlocked, std::memory_order_release); }

  static void copy(const task_entry& from, task_entry& to) noexcept {
    to.h = from.h;
    std::memcpy(to.payload, from.payload, from.h.size <= payload_capacity ? from.h.size : payload_capacity);
  }

  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  alignas(64) std::atomic<std::uint64_t> lock_{unlocked};
  alignas(64) task_entry slots_[capacity];
};

/// A rank's deques, one per worker, at the same heap offset on every rank:
/// a header (how many of them its owner made) and the deques after it.
struct deque_set {
  alignas(64) std::atomic<int> workers{0};

  static constexpr std::size_t header_bytes = 64;
  static std::size_t bytes_for(int workers) noexcept {
    return header_bytes + sizeof(steal_deque) * static_cast<std::size_t>(workers);
  }
  steal_deque& deque(int i) noexcept {
    return *std::launder(reinterpret_cast<steal_deque*>(reinterpret_cast<std::byte*>(this) + header_bytes) + i);
  }
  /// Builds the set in zeroed memory at `at` (the owner, once).
  static deque_set* make(void* at, int workers) {
    auto* s = new (at) deque_set;
    for (int i = 0; i < workers; ++i)
      new (reinterpret_cast<std::byte*>(at) + header_bytes + sizeof(steal_deque) * static_cast<std::size_t>(i))
          steal_deque;
    s->workers.store(workers, std::memory_order_release);
    return s;
  }
};
static_assert(sizeof(deque_set) <= deque_set::header_bytes);
static_assert(std::atomic<std::int64_t>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free &&
                  sizeof(std::atomic<std::int64_t>) == 8 && sizeof(std::atomic<int>) == sizeof(int),
              "remote thieves read and update these words as plain 64-bit (and 32-bit) words");
static_assert(sizeof(steal_deque) % 64 == 0 && deque_set::header_bytes % 8 == 0, "the words stay 8-byte aligned");

}  // namespace weft::detail::fj
