// The deque's THE protocol with thieves that reach it only through one-sided
// operations (remote_steal.cpp), against its owner's pushes and pops, in one
// process: the smp backend's one-sided operations on the deque's memory,
// registered as rank 0's region. Every task is taken exactly once, popped
// by its owner or stolen, with its bytes intact; a task of another root, an
// empty deque and a held lock are never taken from.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "am/smp/smp_one_sided.hpp"
#include "forkjoin/remote_steal.hpp"
#include "forkjoin/steal_deque.hpp"
#include "sched/cpu_relax.hpp"

namespace {

using weft::detail::smp_one_sided;
using weft::detail::smp_region_table;
using weft::detail::fj::attempt_result;
using weft::detail::fj::entry_header;
using weft::detail::fj::steal_deque;
using weft::detail::fj::steal_entry_one_sided;
using weft::detail::fj::task_entry;

/// A deque in zeroed memory, registered as rank 0's region 0; the thieves
/// are ranks 1 and up.
struct remote_deque {
  static constexpr int ranks = 3;
  remote_deque() {
    memory = std::aligned_alloc(64, sizeof(steal_deque));
    std::memset(memory, 0, sizeof(steal_deque));
    deque = new (memory) steal_deque;
    for (int r = 0; r < ranks; ++r) ops.push_back(std::make_unique<smp_one_sided>(table, r, ranks));
    key = ops[0]->register_region(memory, sizeof(steal_deque));
  }
  ~remote_deque() {
    deque->~steal_deque();
    std::free(memory);
  }
  /// One attempt by thief `rank` inside root `root`.
  attempt_result steal(int rank, std::uint64_t root, task_entry& out) {
    return steal_entry_one_sided(*ops[static_cast<std::size_t>(rank)], 0, key, 0,
                                 steal_deque::locked_here + static_cast<std::uint64_t>(rank), root, out);
  }

  void* memory;
  steal_deque* deque;
  smp_region_table table;
  std::vector<std::unique_ptr<smp_one_sided>> ops;
  std::uint64_t key = 0;
};

/// A task numbered `id` (its cell), its payload the same number.
bool push(steal_deque& d, std::uint64_t id, std::uint64_t root) {
  const entry_header h{7, id, 0, sizeof id, root};
  return d.push(h, &id);
}

std::uint64_t payload_of(const task_entry& e) {
  std::uint64_t v;
  std::memcpy(&v, e.payload, sizeof v);
  return v;
}

TEST(OneSidedDeque, EveryTaskTakenOnceByOwnerOrRemoteThieves) {
  remote_deque q;
  constexpr std::uint64_t tasks = 200000;
  std::vector<std::atomic<int>> taken(tasks + 1);
  std::atomic<bool> owner_done{false};
  std::atomic<std::uint64_t> stolen{0}, bad_payload{0};

  std::atomic<int> thieves_started{0};
  auto thief = [&](int rank) {
    task_entry e;
    thieves_started.fetch_add(1);
    for (;;) {
      const bool last_round = owner_done.load(std::memory_order_acquire);
      const attempt_result r = q.steal(rank, 1, e);
      if (r == attempt_result::taken) {
        if (payload_of(e) != e.h.cell || e.h.size != sizeof(std::uint64_t)) bad_payload.fetch_add(1);
        taken[e.h.cell].fetch_add(1);
        stolen.fetch_add(1);
      } else if (last_round && r == attempt_result::empty) {
        return;
      }
    }
  };
  std::thread t1(thief, 1), t2(thief, 2);

  // The owner: in the first half pushes, and pops every third push,
  // popping whenever the deque is full (a deep deque); in the second half
  // pops each task right after pushing it, as a join takes back an
  // unstolen child (thieves and owner race for the last task).
  task_entry e;
  auto pop_one = [&] {
    if (!q.deque->pop(&e)) return;
    if (payload_of(e) != e.h.cell) bad_payload.fetch_add(1);
    taken[e.h.cell].fetch_add(1);
  };
  while (thieves_started.load() < 2) std::this_thread::yield();
  for (std::uint64_t id = 1; id <= tasks; ++id) {
    while (!push(*q.deque, id, 1)) pop_one();
    if (id > tasks / 2) {
      for (int k = 0; k < 100; ++k) weft::detail::cpu_relax();  // a moment for a thief to come
      pop_one();
    } else if (id % 3 == 0) {
      pop_one();
    }
  }
  while (!q.deque->looks_empty()) pop_one();
  owner_done.store(true, std::memory_order_release);
  t1.join();
  t2.join();

  std::uint64_t missing = 0, twice = 0;
  for (std::uint64_t id = 1; id <= tasks; ++id) {
    const int n = taken[id].load();
    missing += n == 0 ? 1 : 0;
    twice += n > 1 ? 1 : 0;
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(twice, 0u);
  EXPECT_EQ(bad_payload.load(), 0u);
  std::printf("stolen by the remote thieves: %llu of %llu\n", static_cast<unsigned long long>(stolen.load()),
              static_cast<unsigned long long>(tasks));
}

TEST(OneSidedDeque, NothingTakenFromAnotherRootAnEmptyDequeOrAHeldLock) {
  remote_deque q;
  task_entry e;
  EXPECT_EQ(q.steal(1, 1, e), attempt_result::empty);

  for (std::uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(push(*q.deque, id, 2));
  EXPECT_EQ(q.steal(1, 1, e), attempt_result::other_root);  // the thief is in root 1, the tasks in root 2
  EXPECT_EQ(q.steal(1, 1, e), attempt_result::other_root);  // given back: still the oldest

  // Another thief holds the lock.
  const std::size_t lock = steal_deque::lock_offset();
  ASSERT_EQ(q.ops[2]->compare_swap(0, q.key, lock, steal_deque::unlocked, 99), steal_deque::unlocked);
  EXPECT_EQ(q.steal(1, 2, e), attempt_result::busy);
  q.ops[2]->swap(0, q.key, lock, steal_deque::unlocked);

  ASSERT_EQ(q.steal(1, 2, e), attempt_result::taken);
  EXPECT_EQ(e.h.cell, 1u);  // the oldest
  // The owner pops the rest, newest first.
  ASSERT_TRUE(q.deque->pop(&e));
  EXPECT_EQ(e.h.cell, 3u);
  ASSERT_TRUE(q.deque->pop(&e));
  EXPECT_EQ(e.h.cell, 2u);
  EXPECT_FALSE(q.deque->pop(&e));
  EXPECT_EQ(q.steal(1, 2, e), attempt_result::empty);
}

}  // namespace
