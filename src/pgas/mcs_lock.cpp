// global_lock as an MCS queue lock on one-sided atomics (mcs_lock.hpp).
// Every read-modify-write of a lock word goes through the transport's
// one-sided operations, also on this rank's own words, so that all of them
// are atomic with respect to each other whatever the backend; a waiter only
// reads its own `locked` word with plain atomic loads, in its own memory.
#include "pgas/mcs_lock.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "pgas/one_sided_heap.hpp"
#include "pgas/state.hpp"
#include "weft/async.hpp"
#include "weft/this_task.hpp"

namespace weft::pgas::detail::mcs {

namespace {

/// A rank's queue nodes: which are free, and which one holds each lock the
/// rank holds (a lock is held by the rank: any of its tasks may release it).
struct rank_nodes {
  std::mutex mutex;
  std::vector<std::uint32_t> free;
  std::unordered_map<std::uint64_t, std::uint32_t> held;  // by lock_key
};

std::vector<std::unique_ptr<rank_nodes>> g_nodes;  // by local rank

std::uint64_t lock_key(int owner, std::uint32_t id) noexcept {
  return static_cast<std::uint64_t>(owner) << 32 | id;
}

std::string lock_name(int owner, std::uint32_t id) {
  return id == 0 ? "the lock of rank " + std::to_string(owner)
                 : "lock " + std::to_string(id) + " of rank " + std::to_string(owner);
}

rank_nodes& nodes_of(int rank) {
  return *g_nodes[static_cast<std::size_t>(rank - process().first_rank)];
}

std::uint32_t take_node(int me) {
  rank_nodes& n = nodes_of(me);
  std::lock_guard g(n.mutex);
  if (n.free.empty())
    fail("rank " + std::to_string(me) + " waits for or holds more than " + std::to_string(max_nodes) +
         " global locks at once");
  const std::uint32_t node = n.free.back();
  n.free.pop_back();
  return node;
}

void give_node(int me, std::uint32_t node) {
  rank_nodes& n = nodes_of(me);
  std::lock_guard g(n.mutex);
  n.free.push_back(node);
}

// One-sided word operations on rank `rank`'s lock words (counted).
std::uint64_t word_swap(int rank, std::size_t offset, std::uint64_t v) {
  const one_sided_words w = my_lock_words();
  count_one_sided();
  return w.ops->swap(rank, w.key, offset, v);
}

std::uint64_t word_cas(int rank, std::size_t offset, std::uint64_t expected, std::uint64_t desired) {
  const one_sided_words w = my_lock_words();
  count_one_sided();
  return w.ops->compare_swap(rank, w.key, offset, expected, desired);
}

/// This rank's own word, read where it lives (the spin of a waiter).
std::uint64_t own_word(int me, std::size_t offset) noexcept {
  return std::atomic_ref<std::uint64_t>(lock_words_of(me)[offset / 8]).load(std::memory_order_acquire);
}

/// Until this rank's word is `until` (true) or is not `until` (false),
/// letting the worker's other tasks run: a waiter's predecessor may be one.
void wait_own(int me, std::size_t offset, std::uint64_t value, bool until) {
  while ((own_word(me, offset) == value) != until) weft::this_task::yield();
}

void now_held(int me, std::uint64_t key, std::uint32_t node) {
  rank_nodes& n = nodes_of(me);
  std::lock_guard g(n.mutex);
  n.held[key] = node;
}

void check_id(int owner, std::uint32_t id) {
  if (id >= max_locks)
    fail(lock_name(owner, id) + ": locks over one-sided operations number at most " + std::to_string(max_locks - 1) +
         " per rank");
}

}  // namespace

void reset(std::size_t local_ranks) {
  g_nodes.clear();
  for (std::size_t i = 0; i < local_ranks; ++i) {
    auto n = std::make_unique<rank_nodes>();
    for (std::uint32_t k = max_nodes; k-- > 0;) n->free.push_back(k);
    g_nodes.push_back(std::move(n));
  }
}

future<bool> acquire(int owner, std::uint32_t id, bool try_only) {
  check_id(owner, id);
  const int me = current_comm().rank;
  const std::uint32_t node = take_node(me);
  const std::uint64_t mine = node_ref(me, node);
  word_swap(me, next_offset(node), 0);
  word_swap(me, locked_offset(node), 1);
  if (try_only) {
    if (word_cas(owner, tail_offset(id), 0, mine) != 0) {
      give_node(me, node);
      return make_ready_future(false);
    }
  } else if (const std::uint64_t pred = word_swap(owner, tail_offset(id), mine); pred != 0) {
    word_swap(ref_rank(pred), next_offset(ref_node(pred)), mine);
    // Queued: a task of this rank waits for the hand-over, so that
    // lock_async returns at once.
    return weft::async([me, node, key = lock_key(owner, id)] {
      wait_own(me, locked_offset(node), 0, true);
      now_held(me, key, node);
      return true;
    });
  }
  now_held(me, lock_key(owner, id), node);
  return make_ready_future(true);
}

void release(int owner, std::uint32_t id) {
  check_id(owner, id);
  const int me = current_comm().rank;
  std::uint32_t node = 0;
  {
    rank_nodes& n = nodes_of(me);
    std::lock_guard g(n.mutex);
    const auto it = n.held.find(lock_key(owner, id));
    if (it != n.held.end()) {
      node = it->second;
      n.held.erase(it);
    } else {
      node = max_nodes;
    }
  }
  if (node == max_nodes) {
    // Who is in the queue, if anyone (one read of the tail: the last to come).
    const std::uint64_t last = word_cas(owner, tail_offset(id), 0, 0);
    const std::string who =
        last == 0 ? std::string("nobody does") : "rank " + std::to_string(ref_rank(last)) + " holds or waits for it";
    fail("unlock of " + lock_name(owner, id) + " by rank " + std::to_string(me) + ", which does not hold it (" + who +
         ")");
  }
  const std::uint64_t mine = node_ref(me, node);
  if (own_word(me, next_offset(node)) == 0) {
    if (word_cas(owner, tail_offset(id), mine, 0) == mine) {
      give_node(me, node);
      return;
    }
    wait_own(me, next_offset(node), 0, false);  // a successor is linking itself in
  }
  const std::uint64_t next = own_word(me, next_offset(node));
  word_swap(ref_rank(next), locked_offset(ref_node(next)), 0);
  give_node(me, node);
}

void check_created(int owner, std::uint32_t id) { check_id(owner, id); }

void check_destroy(int owner, std::uint32_t id) {
  const std::uint64_t last = word_cas(owner, tail_offset(id), 0, 0);
  if (last != 0)
    fail(lock_name(owner, id) + " destroyed while rank " + std::to_string(ref_rank(last)) + " holds it");
}

}  // namespace weft::pgas::detail::mcs
