// Stealing from a rank this process cannot map (run with WEFT_NODE_SIZE=1,
// which puts every other rank among the remote victims) by the transport's
// one-sided operations: rank 0 spawns tasks and then computes without
// making a single weft call, so its worker never polls and never answers a
// message; rank 1, with no progress thread, must take tasks by itself.
// Its second test: a stolen task get()s a future that rank 0 spawned, while
// rank 0's worker computes without polling; the outcome must come from rank
// 0's heap by one-sided operations (src/forkjoin/outcome_board.hpp).
// Without one-sided operations the program says so and passes as skipped.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "pgas/one_sided_heap.hpp"
#include "spmd_main.hpp"
#include "weft/forkjoin.hpp"

using weft::test::on_every_rank;

namespace {

constexpr int spawned = 64;
constexpr auto steal_bound = std::chrono::seconds(60);

/// A spawned task: counts itself in rank 0's heap when it runs elsewhere
/// (an atomic of the pgas layer: no handler of rank 0 runs it) and says
/// where it ran.
int where_it_ran(weft::global_ptr<std::uint64_t> taken) {
  if (weft::rank() != 0) (void)weft::atomic_fetch_add(taken, std::uint64_t{1}).get();
  return weft::rank();
}

/// Rank 0's long computation: reads its own counter with a CPU atomic and
/// nothing else until another rank took a task. Bounded (a hang becomes a
/// failure): false when none was taken.
bool compute_until_taken(weft::global_ptr<std::uint64_t> taken) {
  std::atomic_ref<std::uint64_t> seen(*taken.local());
  const auto give_up = std::chrono::steady_clock::now() + steal_bound;
  volatile std::uint64_t work = 0;
  while (seen.load(std::memory_order_acquire) == 0) {
    work = work + 1;
    if (std::chrono::steady_clock::now() > give_up) return false;
  }
  return true;
}

/// A spawned task whose value its readers await.
long produced(long v) { return v * 3; }

/// Reads `f` and, when it runs on another rank than 0, counts itself in
/// rank 0's heap (after the read: rank 0 stops computing only once a
/// stolen reader has its value).
long read_future(weft::global_future<long> f, weft::global_ptr<std::uint64_t> taken) {
  const long v = f.get();
  if (weft::rank() != 0) (void)weft::atomic_fetch_add(taken, std::uint64_t{1}).get();
  return v;
}

bool no_one_sided() {
  if (::weft::pgas::detail::heap_one_sided(weft::rank()).ops != nullptr) return false;
  if (weft::rank() == 0) std::printf("WEFT_TEST_SKIPPED: no one-sided capability\n");
  return true;
}

}  // namespace

TEST(ForkJoinRemoteSteal, StolenTaskReadsAFutureOfABusyRankThatNeverPolls) {
  on_every_rank([] {
    if (no_one_sided()) return;
    ASSERT_EQ(weft::nranks(), 2);
    const weft::global_ptr<std::uint64_t> taken = weft::allocate_symmetric<std::uint64_t>(1).on(0);
    if (weft::rank() == 0) *taken.local() = 0;
    weft::barrier();
    long sum = -1;
    try {
      sum = weft::root_exec([taken] {
        const weft::global_future<long> f = weft::spawn(produced, 14L);
        (void)f.get();  // done (wherever it ran) before its readers start
        std::vector<weft::global_future<long>> readers;
        for (int i = 0; i < spawned; ++i) readers.push_back(weft::spawn(read_future, f, taken));
        const bool in_time = compute_until_taken(taken);
        long total = 0;
        for (auto& r : readers) total += r.get();  // (all awaited, also when late)
        if (!in_time) throw std::runtime_error("no stolen task read the future within 60 s while rank 0 was busy");
        return total;
      });
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    EXPECT_EQ(sum, 42L * spawned);
    weft::barrier();
    if (weft::rank() == 0) {
      EXPECT_GE(*taken.local(), 1u);
    }
    weft::barrier();
  });
}

TEST(ForkJoinRemoteSteal, IdleRankStealsFromBusyRankThatNeverPolls) {
  on_every_rank([] {
    if (no_one_sided()) return;
    ASSERT_EQ(weft::nranks(), 2);
    const weft::global_ptr<std::uint64_t> taken = weft::allocate_symmetric<std::uint64_t>(1).on(0);
    if (weft::rank() == 0) *taken.local() = 0;
    weft::barrier();
    weft::reset_steal_statistics();
    int ran_elsewhere = -1;
    try {
      ran_elsewhere = weft::root_exec([taken] {
        std::vector<weft::global_future<int>> tasks;
        for (int i = 0; i < spawned; ++i) tasks.push_back(weft::spawn(where_it_ran, taken));
        const bool in_time = compute_until_taken(taken);
        int elsewhere = 0;
        for (auto& t : tasks) elsewhere += t.get() != 0 ? 1 : 0;  // (all awaited, also when late)
        if (!in_time) throw std::runtime_error("no task left rank 0 within 60 s while its worker was busy");
        return elsewhere;
      });
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    EXPECT_GE(ran_elsewhere, 1);
    const weft::steal_statistics s = weft::steal_stats();
    EXPECT_EQ(s.from_node, 0u);  // rank 0 is not mapped as a victim here
    if (weft::rank() == 1) {
      EXPECT_GE(s.from_remote, 1u);
    }
    weft::barrier();
  });
}
