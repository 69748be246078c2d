// The one-sided path of the pgas layer: with --weft:node-size=1 no rank
// maps another's heap, so on a transport with one-sided operations every
// put, get, atomic, checkout fill and lock goes through them, and the
// target takes no part. Where the transport has none the program says so
// and is skipped.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compute_until_flag.hpp"
#include "pgas/one_sided_heap.hpp"
#include "weft/weft.hpp"

namespace {

std::atomic<bool> g_no_capability{false};

/// Runs `body` on every rank with --weft:node-size=1; false (and the
/// skip line printed) when the transport has no one-sided operations.
template <class F>
bool on_every_rank_one_sided(F&& body) {
  std::vector<std::string> args = {"one_sided_path_test", "--weft:node-size=1"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  const int rc = weft::run(argc, argv.data(), [&] {
    if (weft::pgas::detail::heap_one_sided(weft::rank()).ops == nullptr) {
      g_no_capability = true;
      return;
    }
    body();
  });
  EXPECT_EQ(rc, 0);
  if (!g_no_capability) return true;
  std::puts("WEFT_TEST_SKIPPED: no one-sided capability");
  return false;
}

std::uint64_t issued() { return weft::pgas::detail::one_sided_issued(); }

struct cells {
  std::int64_t put_here[8];
  std::int64_t get_from[8];
  std::int64_t strided[16];
  std::int64_t i64;
  std::uint64_t u64;
  double f64;
  std::int32_t i32;
  std::uint32_t u32;
  float f32;
  std::int32_t min32;
  std::int64_t max64;
  std::int64_t flag;
  std::int64_t under_lock;
};

template <class T>
weft::global_ptr<T> field(weft::global_ptr<cells> c, std::size_t offset) {
  return weft::global_ptr<T>::at(c.rank(), c.offset() + offset);
}
#define FIELD(c, type, name) field<type>(c, offsetof(cells, name))

}  // namespace

// Every kind of access from every rank to its right neighbour: the values
// arrive, and the process's one-sided operation count grows with them.
TEST(OneSidedPath, EveryOperationKindTakesIt) {
  on_every_rank_one_sided([] {
    const int me = weft::rank(), n = weft::nranks();
    auto box = weft::allocate_symmetric<cells>();
    std::memset(box.local(), 0, sizeof(cells));
    for (int i = 0; i < 8; ++i) box.local()->get_from[i] = 1000 * me + i;
    weft::barrier();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    auto c = box.on(right);
    const std::uint64_t before = issued();

    std::int64_t out[8], in[8];
    for (int i = 0; i < 8; ++i) out[i] = 100 * me + i;
    weft::put(FIELD(c, std::int64_t, put_here), std::span<const std::int64_t>(out)).get();
    weft::get(FIELD(c, std::int64_t, get_from), std::span<std::int64_t>(in)).get();
    for (int i = 0; i < 8; ++i) EXPECT_EQ(in[i], 1000 * right + i);
    const std::int64_t column[4] = {me, me + 1, me + 2, me + 3};
    weft::put_strided(FIELD(c, std::int64_t, strided), 4, column, 1, 1, 4).get();
    EXPECT_EQ(weft::atomic_fetch_add(FIELD(c, std::int64_t, i64), std::int64_t{3}).get(), 0);
    EXPECT_EQ(weft::atomic_fetch_add(FIELD(c, std::uint64_t, u64), std::uint64_t{5}).get(), 0u);
    EXPECT_EQ(weft::atomic_fetch_add(FIELD(c, double, f64), 0.5).get(), 0.0);
    EXPECT_EQ(weft::atomic_fetch_add(FIELD(c, std::int32_t, i32), std::int32_t{-7}).get(), 0);
    EXPECT_EQ(weft::atomic_exchange(FIELD(c, std::uint32_t, u32), std::uint32_t{9}).get(), 0u);
    weft::atomic_store(FIELD(c, float, f32), 1.25f).get();
    EXPECT_EQ(weft::atomic_load(FIELD(c, float, f32)).get(), 1.25f);
    EXPECT_EQ(weft::atomic_fetch_min(FIELD(c, std::int32_t, min32), std::int32_t{-4}).get(), 0);
    EXPECT_EQ(weft::atomic_fetch_max(FIELD(c, std::int64_t, max64), std::int64_t{11}).get(), 0);
    EXPECT_EQ(weft::atomic_compare_exchange(FIELD(c, std::int64_t, i64), std::int64_t{3}, std::int64_t{30}).get(), 3);
    EXPECT_EQ(weft::atomic_compare_exchange(FIELD(c, std::int64_t, i64), std::int64_t{3}, std::int64_t{99}).get(), 30);
    {
      auto lock = weft::global_lock::of_rank(right);
      lock.lock();
      weft::put(FIELD(c, std::int64_t, under_lock), std::int64_t{me + 1}).get();
      lock.unlock();
    }
    {
      auto ck = weft::make_checkout(FIELD(c, std::int64_t, flag), 1, weft::checkout_mode::read_write);
      ck[0] += 1;
    }
    weft::cache_release();
    EXPECT_TRUE(weft::make_checkout(FIELD(c, std::int64_t, flag), 1, weft::checkout_mode::read).cached());
    const std::uint64_t after = issued();
    // At least one operation each: 2 puts, 1 get, 4 strided blocks, 11
    // atomics, a lock and unlock, a fill and a write-back.
    EXPECT_GE(after - before, 21u);
    weft::barrier();

    const cells& mine = *box.local();
    for (int i = 0; i < 8; ++i) EXPECT_EQ(mine.put_here[i], 100 * left + i);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(mine.strided[4 * i], left + i);
    EXPECT_EQ(mine.i64, 30);
    EXPECT_EQ(mine.u64, 5u);
    EXPECT_EQ(mine.f64, 0.5);
    EXPECT_EQ(mine.i32, -7);
    EXPECT_EQ(mine.u32, 9u);
    EXPECT_EQ(mine.f32, 1.25f);
    EXPECT_EQ(mine.min32, -4);
    EXPECT_EQ(mine.max64, 11);
    EXPECT_EQ(mine.flag, 1);
    EXPECT_EQ(mine.under_lock, left + 1);
    weft::barrier();
    weft::free_symmetric(box);
  });
}

// Rank 1 computes without any weft call until rank 0 has put, got, added
// atomically and locked its memory, and says so through a flag: rank 1's
// only worker never serves anything meanwhile, so none of it can have
// needed rank 1 (a message path would leave rank 0 waiting, and rank 1
// would reach its deadline, which only guards against a hang).
TEST(OneSidedPath, OperationsCompleteWhileTheTargetComputes) {
  on_every_rank_one_sided([] {
    const int me = weft::rank();
    auto box = weft::allocate_symmetric<cells>();
    std::memset(box.local(), 0, sizeof(cells));
    for (int i = 0; i < 8; ++i) box.local()->get_from[i] = 1000 * me + i;
    weft::barrier();
    if (me == 1) {
      EXPECT_TRUE(weft::test::compute_until_flag(box.local()->flag))
          << "rank 0's operations did not complete while rank 1 computed";
      const cells& mine = *box.local();
      for (int i = 0; i < 8; ++i) EXPECT_EQ(mine.put_here[i], 7000 + i);
      EXPECT_EQ(mine.i64, 5);
      EXPECT_EQ(mine.i32, 2);
      EXPECT_EQ(mine.under_lock, 42);
    } else if (me == 0) {
      auto c = box.on(1);
      const std::uint64_t before = issued();
      std::int64_t out[8], in[8];
      for (int i = 0; i < 8; ++i) out[i] = 7000 + i;
      auto p = weft::put(FIELD(c, std::int64_t, put_here), std::span<const std::int64_t>(out));
      auto g = weft::get(FIELD(c, std::int64_t, get_from), std::span<std::int64_t>(in));
      auto a = weft::atomic_fetch_add(FIELD(c, std::int64_t, i64), std::int64_t{5});
      auto b = weft::atomic_fetch_add(FIELD(c, std::int32_t, i32), std::int32_t{2});
      p.get();
      g.get();
      EXPECT_EQ(a.get(), 0);
      EXPECT_EQ(b.get(), 0);
      for (int i = 0; i < 8; ++i) EXPECT_EQ(in[i], 1000 + i);
      auto lock = weft::global_lock::of_rank(1);
      lock.lock();
      weft::put(FIELD(c, std::int64_t, under_lock), std::int64_t{42}).get();
      lock.unlock();
      EXPECT_GE(issued() - before, 6u);
      // Only now may the target stop computing.
      weft::atomic_store(FIELD(c, std::int64_t, flag), std::int64_t{1}).get();
    }
    weft::barrier();
    weft::free_symmetric(box);
  });
}

// Every rank's tasks increment a plain counter on the last rank under a
// lock that rank created, by get and put: exact after every round.
TEST(OneSidedPath, GlobalLockStress) {
  on_every_rank_one_sided([] {
    constexpr int tasks = 4, per_task = 50, rounds = 3;
    const int me = weft::rank(), n = weft::nranks();
    auto counter = weft::allocate_symmetric<std::int64_t>();
    *counter.local() = 0;
    weft::global_lock mine = me == n - 1 ? weft::global_lock::create() : weft::global_lock{};
    const weft::global_lock l = weft::broadcast(mine, n - 1);
    weft::barrier();
    auto target = counter.on(n - 1);
    for (int round = 1; round <= rounds; ++round) {
      weft::task_group g;
      for (int t = 0; t < tasks; ++t)
        g.run([&] {
          for (int i = 0; i < per_task; ++i) {
            weft::global_lock lk = l;
            lk.lock();
            const std::int64_t v = weft::get(target).get();
            weft::put(target, v + 1).get();
            lk.unlock();
          }
        });
      g.wait();
      weft::barrier();
      EXPECT_EQ(weft::get(target).get(), std::int64_t{n} * tasks * per_task * round) << "round " << round;
      weft::barrier();
    }
    if (me == n - 1) mine.destroy();
    weft::barrier();
    weft::free_symmetric(counter);
  });
}
