// Internal: the locks one rank owns, each with its FIFO queue of waiting
// requests (DiOMP's owner-side queue). Requests come from any rank — through
// messages, or directly from ranks in this process — and are served in
// arrival order. Lock 0 exists on every rank: the rank's own lock
// (ompx_lock).
#pragma once
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace weft::pgas::detail {

/// A request as the owner keeps it: who asked, and the requester's record.
struct lock_waiter {
  int rank;
  std::uint64_t token;
};

class lock_table {
 public:
  lock_table() { locks_[0]; }

  std::uint32_t create() {
    std::lock_guard g(mutex_);
    const std::uint32_t id = next_++;
    locks_[id];
    return id;
  }

  enum class outcome { granted, queued, busy, no_such_lock };
  /// A request by `w.rank`: granted now, queued behind the holder, or (for a
  /// try) refused.
  outcome request(std::uint32_t id, lock_waiter w, bool try_only) {
    std::lock_guard g(mutex_);
    auto it = locks_.find(id);
    if (it == locks_.end()) return outcome::no_such_lock;
    entry& e = it->second;
    if (e.holder < 0) {
      e.holder = w.rank;
      return outcome::granted;
    }
    if (try_only) return outcome::busy;
    e.queue.push_back(w);
    return outcome::queued;
  }

  enum class release_outcome { next, free, not_held, no_such_lock };
  /// A release by `rank`: the lock passes to the oldest waiter (`next` set)
  /// or becomes free. `holder` reports who held it when it was not `rank`.
  release_outcome release(std::uint32_t id, int rank, lock_waiter& next, int& holder) {
    std::lock_guard g(mutex_);
    auto it = locks_.find(id);
    if (it == locks_.end()) return release_outcome::no_such_lock;
    entry& e = it->second;
    holder = e.holder;
    if (e.holder != rank) return release_outcome::not_held;
    if (e.queue.empty()) {
      e.holder = -1;
      return release_outcome::free;
    }
    next = e.queue.front();
    e.queue.pop_front();
    e.holder = next.rank;
    return release_outcome::next;
  }

  /// Removes a free lock; returns its holder (>= 0) or -2 (no such lock)
  /// instead when it cannot be removed.
  int destroy(std::uint32_t id) {
    std::lock_guard g(mutex_);
    auto it = locks_.find(id);
    if (it == locks_.end()) return -2;
    if (it->second.holder >= 0) return it->second.holder;
    locks_.erase(it);
    return -1;
  }

  /// Locks still held (at the rank's end, for the report).
  std::size_t held() const {
    std::lock_guard g(mutex_);
    std::size_t n = 0;
    for (const auto& [id, e] : locks_) n += e.holder >= 0 ? 1 : 0;
    return n;
  }

 private:
  struct entry {
    int holder = -1;  // rank, -1 when free
    std::deque<lock_waiter> queue;
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::uint32_t, entry> locks_;
  std::uint32_t next_ = 1;
};

}  // namespace weft::pgas::detail
