// Remote atomics and distributed locks under contention from every rank and
// several tasks per rank.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "spmd_main.hpp"

using weft::test::on_every_rank;

namespace {
constexpr int tasks = 4;
constexpr int rounds = 250;

template <class F>
void from_tasks(F&& body) {
  weft::task_group g;
  for (int t = 0; t < tasks; ++t) g.run([&body, t] { body(t); });
  g.wait();
}
}  // namespace

TEST(PgasAtomics, FetchAddFromEveryRankAndTask) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    struct counters {
      std::int64_t i64;
      std::uint32_t u32;
      double f64;
    };
    auto c = weft::allocate_symmetric<counters>();
    *c.local() = {};
    weft::barrier();
    auto at0 = c.on(0);
    std::vector<char> seen(static_cast<std::size_t>(n * tasks * rounds), 0);
    from_tasks([&](int t) {
      for (int i = 0; i < rounds; ++i) {
        const auto old = weft::atomic_fetch_add(at0.reinterpret<std::int64_t>(), std::int64_t{1}).get();
        ASSERT_LT(old, n * tasks * rounds);
        seen[static_cast<std::size_t>(old)] = 1;  // each old value once, on one rank
        (void)weft::atomic_fetch_add(weft::global_ptr<std::uint32_t>::at(0, at0.offset() + 8), 2u);
        (void)weft::atomic_fetch_add(weft::global_ptr<double>::at(0, at0.offset() + 16), 0.5);
      }
      (void)t;
    });
    weft::wait_atomics();
    weft::barrier();
    if (me == 0) {
      EXPECT_EQ(c.local()->i64, n * tasks * rounds);
      EXPECT_EQ(c.local()->u32, 2u * n * tasks * rounds);
      EXPECT_EQ(c.local()->f64, 0.5 * n * tasks * rounds);
    }
    // Every old value was returned exactly once across all ranks.
    std::int64_t mine = 0;
    for (char s : seen) mine += s;
    EXPECT_EQ(weft::allreduce(mine, std::plus<>{}), std::int64_t{n} * tasks * rounds);
    weft::barrier();
    weft::free_symmetric(c);
  });
}

TEST(PgasAtomics, CompareExchangeMinMaxExchange) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    auto v = weft::allocate_symmetric<std::int32_t>(4);
    if (me == 0) {
      v.local()[0] = -1;      // claimed by compare_exchange
      v.local()[1] = 1 << 30;  // min
      v.local()[2] = -(1 << 30);  // max
      v.local()[3] = 0;       // exchange chain
    }
    weft::barrier();
    auto base = v.on(0);
    // Exactly one rank claims the slot.
    const std::int32_t old = weft::atomic_compare_exchange(base, -1, me).get();
    const int claimed = old == -1 ? 1 : 0;
    EXPECT_EQ(weft::allreduce(claimed, std::plus<>{}), 1);
    (void)weft::atomic_fetch_min(base + 1, 100 + me).get();
    (void)weft::atomic_fetch_max(base + 2, 100 + me).get();
    // The exchanges form a chain: every value but one is returned once.
    const std::int32_t prev = weft::atomic_exchange(base + 3, me + 1).get();
    weft::barrier();
    const std::int64_t prev_sum = weft::allreduce(std::int64_t{prev}, std::plus<>{});
    const std::int32_t last = weft::atomic_load(base + 3).get();
    EXPECT_EQ(prev_sum + last, std::int64_t{n} * (n + 1) / 2);
    EXPECT_EQ(weft::atomic_load(base + 1).get(), 100);
    EXPECT_EQ(weft::atomic_load(base + 2).get(), 100 + n - 1);
    weft::barrier();
    if (me == n - 1) weft::atomic_store(base + 1, std::int32_t{-5}).get();
    weft::barrier();
    EXPECT_EQ(weft::atomic_load(base + 1).get(), -5);
    weft::barrier();
    weft::free_symmetric(v);
  });
}

// A plain (non-atomic) read-modify-write of a counter on rank 0 by get and
// put, safe only under the lock: lost updates show up in the total.
TEST(PgasLocks, RankLockSerializesReadModifyWrite) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    auto counter = weft::allocate_symmetric<long>();
    *counter.local() = 0;
    weft::barrier();
    weft::global_lock l = weft::global_lock::of_rank(0);
    from_tasks([&](int) {
      for (int i = 0; i < rounds / 5; ++i) {
        l.lock();
        const long v = weft::get(counter.on(0)).get();
        weft::put(counter.on(0), v + 1).get();
        l.unlock();
      }
    });
    weft::barrier();
    if (me == 0) {
      EXPECT_EQ(*counter.local(), long{n} * tasks * (rounds / 5));
    }
    weft::barrier();
    weft::free_symmetric(counter);
  });
}

TEST(PgasLocks, CreatedLocksAndTryLock) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    // Rank n-1 creates a lock and hands it to everyone.
    weft::global_lock mine = me == n - 1 ? weft::global_lock::create() : weft::global_lock{};
    weft::global_lock l = weft::broadcast(mine, n - 1);
    EXPECT_EQ(l.owner(), n - 1);
    EXPECT_NE(l.id(), 0u);
    if (me == 0) l.lock();
    weft::barrier();
    if (me != 0) {
      EXPECT_FALSE(l.try_lock());  // rank 0 holds it
    }
    weft::barrier();
    if (me == 0) l.unlock();
    weft::barrier();
    const bool got = l.try_lock();
    const int holders = weft::allreduce(got ? 1 : 0, std::plus<>{});
    EXPECT_EQ(holders, 1);
    if (got) l.unlock();
    weft::barrier();
    l.lock_async().get();
    l.unlock();
    weft::barrier();
    if (me == n - 1) l.destroy();
    weft::barrier();
  });
}
