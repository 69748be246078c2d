// checkout/checkin through the software cache: run with the cache forced on
// (--weft:cache=always), through messages (--weft:node-size=1), with a
// tiny cache (evictions), and under mpiexec. Every test sets the memory up
// by plain stores into its own heap, then cache_barrier()s, so no cached
// copy is older than that.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <vector>

#include "spmd_main.hpp"
#include "weft/this_task.hpp"

using weft::test::on_every_rank;

namespace {

constexpr std::size_t block_bytes_max = 64 * 1024;

std::int64_t pattern(int rank, std::size_t i) { return 1000000 * static_cast<std::int64_t>(rank) + static_cast<std::int64_t>(i); }

}  // namespace

// Write into the right neighbour's array across several blocks, read it
// back, then read_write the left neighbour's.
TEST(PgasCheckout, ReadWriteAndReadWriteAcrossBlocks) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    const std::size_t count = 3 * block_bytes_max / sizeof(std::int64_t) + 123;  // several blocks
    const std::size_t first = 77;                                                  // not block-aligned
    auto a = weft::allocate_symmetric<std::int64_t>(count + first);
    for (std::size_t i = 0; i < count + first; ++i) a.local()[i] = -1;
    weft::cache_barrier();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    {
      auto out = weft::make_checkout(a.on(right) + static_cast<std::ptrdiff_t>(first), count, weft::checkout_mode::write);
      ASSERT_EQ(out.size(), count);
      for (std::size_t i = 0; i < count; ++i) out[i] = pattern(me, i);
    }
    weft::cache_barrier();
    {
      auto in = weft::make_checkout(weft::global_span<std::int64_t>{a.on(me), count + first}, weft::checkout_mode::read);
      for (std::size_t i = 0; i < first; ++i) ASSERT_EQ(in[i], -1) << i;
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(in[first + i], pattern(left, i)) << i;
    }
    weft::barrier();  // everyone has read before anyone changes it again
    {
      auto rw = weft::make_checkout(a.on(left) + static_cast<std::ptrdiff_t>(first), count, weft::checkout_mode::read_write);
      for (std::size_t i = 0; i < count; ++i) rw[i] += 1;  // pattern(left's left) + 1
    }
    weft::cache_barrier();
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(a.local()[first + i], pattern(left, i) + 1) << i;
    weft::barrier();
    weft::free_symmetric(a);
  });
}

// Every rank writes its own slice of one block on rank 0; all slices survive
// (only the checked-out bytes go back).
TEST(PgasCheckout, DisjointWritesToOneBlockAllSurvive) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    constexpr std::size_t slice = 100;
    auto a = weft::allocate_symmetric<std::int64_t>(slice * static_cast<std::size_t>(n) * 2);
    for (std::size_t i = 0; i < slice * static_cast<std::size_t>(n) * 2; ++i) a.local()[i] = 7;
    weft::cache_barrier();
    auto mine = a.on(0) + static_cast<std::ptrdiff_t>(slice) * me;
    {
      auto out = weft::make_checkout(mine, slice, weft::checkout_mode::write);
      for (std::size_t i = 0; i < slice; ++i) out[i] = pattern(me, i);
    }
    // read_write of a second slice: the fetched neighbours' bytes do not go back.
    {
      auto rw = weft::make_checkout(mine + static_cast<std::ptrdiff_t>(slice) * n, slice, weft::checkout_mode::read_write);
      for (std::size_t i = 0; i < slice; ++i) rw[i] += me;
    }
    weft::cache_barrier();
    auto all = weft::make_checkout(a.on(0), slice * static_cast<std::size_t>(n) * 2, weft::checkout_mode::read);
    for (int r = 0; r < n; ++r)
      for (std::size_t i = 0; i < slice; ++i) {
        ASSERT_EQ(all[static_cast<std::size_t>(r) * slice + i], pattern(r, i));
        ASSERT_EQ(all[static_cast<std::size_t>(r + n) * slice + i], 7 + r);
      }
    all.checkin();
    weft::barrier();
    weft::free_symmetric(a);
  });
}

// A cached block stays as it was until acquire; after the writer's release
// and the reader's acquire the new value is seen.
TEST(PgasCheckout, ReleaseAcquireVisibility) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    auto cell = weft::allocate_symmetric<std::int64_t>(16);
    for (int i = 0; i < 16; ++i) cell.local()[i] = 0;
    weft::cache_barrier();
    const auto target = cell.on(n - 1);
    bool cached = false;
    {
      auto before = weft::make_checkout(target, 16, weft::checkout_mode::read);
      cached = before.cached();
      EXPECT_EQ(before[3], 0);
    }
    weft::barrier();
    if (me == 0) {
      auto out = weft::make_checkout(target + 3, 1, weft::checkout_mode::write);
      out[0] = 42;
      out.checkin();
      weft::cache_release();
    }
    weft::barrier();
    if (me != 0 && cached) {
      auto stale = weft::make_checkout(target, 16, weft::checkout_mode::read);
      EXPECT_EQ(stale[3], 0) << "a cached block changed without an acquire";
    }
    weft::cache_acquire();
    auto after = weft::make_checkout(target, 16, weft::checkout_mode::read);
    EXPECT_EQ(after[3], 42);
    after.checkin();
    weft::barrier();
    weft::free_symmetric(cell);
  });
}

// The acquire at a fork-join task boundary runs while other tasks of the
// rank may hold checkouts (forkjoin acquires at steals and joins). A block
// held checked out forgets its other clean bytes all the same, and keeps the
// held ones: here the held checkouts belong to the acquiring task itself,
// standing in for another task of the rank.
TEST(PgasCheckout, BoundaryAcquireForgetsAllButHeldBytes) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks(), owner = n - 1;
    const std::size_t mine = 16 + static_cast<std::size_t>(me);  // the element this rank writes
    auto cell = weft::allocate_symmetric<std::int64_t>(16 + static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < 16 + static_cast<std::size_t>(n); ++i) cell.local()[i] = 0;
    weft::cache_barrier();
    const auto target = cell.on(owner);
    std::optional<weft::checkout<const std::int64_t>> held;  // fetched its sub-block, 8 still 0
    std::optional<weft::checkout<std::int64_t>> writing;
    if (me != owner) {
      held.emplace(weft::make_checkout(target, 1, weft::checkout_mode::read));
      writing.emplace(weft::make_checkout(target + static_cast<std::ptrdiff_t>(mine), 1, weft::checkout_mode::write));
      (*writing)[0] = 100 + me;
    }
    weft::barrier();
    if (me == owner) cell.local()[8] = 42;
    weft::barrier();
    if (me != owner) {
      weft::detail::pgas::task_boundary_acquire();
      auto after = weft::make_checkout(target + 8, 1, weft::checkout_mode::read);
      EXPECT_EQ(after[0], 42) << "a block held by another task kept a byte older than the acquire";
      EXPECT_EQ((*held)[0], 0);
      EXPECT_EQ((*writing)[0], 100 + me) << "the acquire refetched bytes a live write checkout holds";
      after.checkin();
      held.reset();
      writing.reset();
    }
    weft::cache_barrier();
    if (me == owner) {
      for (int r = 0; r < owner; ++r) EXPECT_EQ(cell.local()[16 + r], 100 + r);
    }
    weft::barrier();
    weft::free_symmetric(cell);
  });
}

/// A --weft: size from its WEFT_ variable, or `fallback`.
std::size_t size_from_env(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr) return fallback;
  char* end = nullptr;
  std::size_t n = std::strtoull(v, &end, 10);
  if (*end == 'K') n <<= 10;
  return n;
}

// A read miss of one element fetches the sub-block it lies in
// (--weft:cache-sub-block), not its whole block; a sub-block of the block's
// size or more fetches the whole block.
TEST(PgasCheckout, ReadMissFetchesItsSubBlock) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    auto a = weft::allocate_symmetric<std::int64_t>(4096);
    weft::cache_barrier();  // nothing of it is cached now
    const auto before = weft::cache_stats();
    auto in = weft::make_checkout(a.on((me + 1) % n) + 1500, 1, weft::checkout_mode::read);
    if (in.cached()) {
      const std::size_t block = size_from_env("WEFT_CACHE_BLOCK", 64 << 10);
      const std::size_t sub = size_from_env("WEFT_CACHE_SUB_BLOCK", 4 << 10);
      EXPECT_EQ(weft::cache_stats().fetched_bytes - before.fetched_bytes, std::min(sub, block));
    }
    in.checkin();
    weft::barrier();
    weft::free_symmetric(a);
  });
}

// A write checkout fetches nothing; a read checkout of the same block does.
TEST(PgasCheckout, WriteModeDoesNotFetch) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    auto a = weft::allocate_symmetric<std::int64_t>(2048);
    weft::cache_barrier();
    const auto target = a.on((me + 1) % n);
    const auto before = weft::cache_stats();
    auto out = weft::make_checkout(target, 1024, weft::checkout_mode::write);
    const bool cached = out.cached();
    for (auto& x : out) x = me;
    out.checkin();
    const auto after_write = weft::cache_stats();
    EXPECT_EQ(after_write.fetches, before.fetches);
    if (cached) {
      EXPECT_EQ(after_write.cached_checkouts, before.cached_checkouts + 1);
      auto other = weft::make_checkout(target + 1500, 1, weft::checkout_mode::read);  // a block not written
      EXPECT_GT(weft::cache_stats().fetches, after_write.fetches);
    } else {
      EXPECT_EQ(out.data(), nullptr);  // checked in
      EXPECT_EQ(after_write.direct_checkouts, before.direct_checkouts + 1);
    }
    weft::cache_barrier();
    weft::barrier();
    weft::free_symmetric(a);
  });
}

// Memory this process maps is handed out as is unless the cache is forced.
TEST(PgasCheckout, MappedMemoryIsNotCopied) {
  on_every_rank([] {
    const int n = weft::nranks();
    auto a = weft::allocate_symmetric<int>(8);
    weft::cache_barrier();
    for (int r = 0; r < n; ++r) {
      auto c = weft::make_checkout(a.on(r), 8, weft::checkout_mode::read);
      if (c.cached()) {
        EXPECT_NE(c.data(), a.on(r).local());
      } else {
        EXPECT_EQ(c.data(), a.on(r).local());
      }
    }
    weft::barrier();
    weft::free_symmetric(a);
  });
}

// A working set several times the cache (run with a 256K cache of 4K
// blocks): written in pieces to the right neighbour, then read back in
// pieces; blocks are evicted (and written back) along the way.
TEST(PgasCheckout, WorkingSetLargerThanTheCache) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    constexpr std::size_t count = (1u << 20) / sizeof(std::int64_t), piece = 2048;  // 1 MiB in 16K pieces
    auto a = weft::allocate_symmetric<std::int64_t>(count);
    weft::cache_barrier();
    const auto right = a.on((me + 1) % n);
    for (std::size_t at = 0; at < count; at += piece) {
      auto out = weft::make_checkout(right + static_cast<std::ptrdiff_t>(at), piece, weft::checkout_mode::write);
      for (std::size_t i = 0; i < piece; ++i) out[i] = pattern(me, at + i);
    }
    weft::cache_barrier();
    const auto left = (me + n - 1) % n;
    for (std::size_t at = 0; at < count; at += piece) {
      auto in = weft::make_checkout(a.on(me) + static_cast<std::ptrdiff_t>(at), piece, weft::checkout_mode::read);
      for (std::size_t i = 0; i < piece; ++i) ASSERT_EQ(in[i], pattern(left, at + i)) << at + i;
    }
    const auto s = weft::cache_stats();
    if (s.cached_checkouts > 0 && std::getenv("WEFT_CACHE_SIZE") != nullptr) {  // the tiny-cache runs
      EXPECT_GT(s.evictions, 0u);
      EXPECT_GT(s.write_backs, 0u);
    }
    weft::barrier();
    weft::free_symmetric(a);
  });
}

// Checkouts of several blocks, over and over, while their blocks move
// between cache slots (evictions, the acquire of each cache_barrier), so
// that a span's block may come back in a slot other than the one the same
// place showed before: each span must show its own blocks' current bytes.
// In the tiny-cache runs the spans also visit far more block places than
// the cache keeps mapped side by side.
TEST(PgasCheckout, SpansAfterTheirBlocksMovedBetweenSlots) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    constexpr std::size_t count = (4u << 20) / sizeof(std::int64_t), span = 20000;  // 4 MiB; spans of 160 KB
    auto a = weft::allocate_symmetric<std::int64_t>(count);
    for (std::size_t i = 0; i < count; ++i) a.local()[i] = pattern(me, i);
    weft::cache_barrier();
    const int right = (me + 1) % n;
    for (std::int64_t round = 0; round < 3; ++round) {
      for (std::size_t at = static_cast<std::size_t>(round) * 1237; at + span <= count; at += span * 3 / 2 + 101) {
        auto in = weft::make_checkout(a.on(right) + static_cast<std::ptrdiff_t>(at), span, weft::checkout_mode::read);
        for (std::size_t i = 0; i < span; ++i) ASSERT_EQ(in[i], pattern(right, at + i) + round) << round << " " << at + i;
      }
      weft::barrier();  // all have read before the left neighbour changes it
      for (std::size_t at = 0; at < count; at += span) {
        const std::size_t k = std::min(span, count - at);
        auto rw = weft::make_checkout(a.on(right) + static_cast<std::ptrdiff_t>(at), k, weft::checkout_mode::read_write);
        for (std::size_t i = 0; i < k; ++i) rw[i] += 1;
      }
      weft::cache_barrier();
    }
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(a.local()[i], pattern(me, i) + 3) << i;  // +1 a round
    weft::barrier();
    weft::free_symmetric(a);
  });
}

// Four tasks per rank check out, write and read disjoint pieces of the same
// remote blocks at once.
TEST(PgasCheckout, ManyTasksAtOnce) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    constexpr std::size_t tasks = 4, piece = 3000;  // pieces share blocks
    auto a = weft::allocate_symmetric<std::int64_t>(tasks * piece);
    weft::cache_barrier();
    const auto right = a.on((me + 1) % n);
    std::vector<weft::future<void>> fs;
    for (std::size_t t = 0; t < tasks; ++t)
      fs.push_back(weft::async([=] {
        const auto at = right + static_cast<std::ptrdiff_t>(t * piece);
        for (int round = 0; round < 3; ++round) {
          {
            auto out = weft::make_checkout(at, piece, weft::checkout_mode::write);
            for (std::size_t i = 0; i < piece; ++i) out[i] = pattern(me, t * piece + i) + round;
          }
          auto in = weft::make_checkout(at, piece, weft::checkout_mode::read);
          for (std::size_t i = 0; i < piece; ++i) ASSERT_EQ(in[i], pattern(me, t * piece + i) + round);
        }
      }));
    for (auto& f : fs) f.get();
    weft::cache_barrier();
    const int left = (me + n - 1) % n;
    for (std::size_t i = 0; i < tasks * piece; ++i) ASSERT_EQ(a.local()[i], pattern(left, i) + 2);
    weft::barrier();
    weft::free_symmetric(a);
  });
}

// More blocks held at once than the cache has (the tiny-cache runs: 64
// blocks of 4K): eight tasks per rank each hold a 12-block checkout while
// they give way to the others, as tasks suspended in a fetch do. A checkout
// that finds every slot pinned waits for one to be checked in.
TEST(PgasCheckout, TasksHoldingMoreThanTheCacheWaitForEachOther) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    constexpr std::size_t tasks = 8, piece = 12 * 4096 / sizeof(std::int64_t);
    auto a = weft::allocate_symmetric<std::int64_t>(tasks * piece);
    weft::cache_barrier();
    const auto right = a.on((me + 1) % n);
    std::vector<weft::future<void>> fs;
    for (std::size_t t = 0; t < tasks; ++t)
      fs.push_back(weft::async([=] {
        auto out = weft::make_checkout(right + static_cast<std::ptrdiff_t>(t * piece), piece, weft::checkout_mode::write);
        for (std::size_t i = 0; i < piece; ++i) out[i] = pattern(me, t * piece + i);
        for (int k = 0; k < 20; ++k) weft::this_task::yield();
      }));
    for (auto& f : fs) f.get();
    weft::cache_barrier();
    const int left = (me + n - 1) % n;
    for (std::size_t i = 0; i < tasks * piece; ++i) ASSERT_EQ(a.local()[i], pattern(left, i)) << i;
    weft::barrier();
    weft::free_symmetric(a);
  });
}

// fence() is a release too.
TEST(PgasCheckout, FenceReleases) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    auto a = weft::allocate_symmetric<int>(4);
    weft::cache_barrier();
    {
      auto out = weft::make_checkout(a.on((me + 1) % n) + 2, 1, weft::checkout_mode::write);
      out[0] = me + 10;
    }
    weft::fence();
    weft::barrier();
    EXPECT_EQ(a.local()[2], (me + n - 1) % n + 10);
    weft::barrier();
    weft::free_symmetric(a);
  });
}
