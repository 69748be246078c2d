// The symmetric heap: collective blocks at the same offset everywhere,
// rank-local blocks reachable by global pointer, reuse after free.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <vector>

#include "spmd_main.hpp"

using weft::test::on_every_rank;

namespace {
// The smallest and the largest value over all ranks.
std::array<std::uint64_t, 2> extremes(std::uint64_t v) {
  const auto e = weft::allreduce(std::array<std::uint64_t, 2>{v, ~v}, [](auto a, auto b) {
    return std::array<std::uint64_t, 2>{std::min(a[0], b[0]), std::min(a[1], b[1])};
  });
  return {e[0], ~e[1]};
}
}  // namespace

TEST(PgasHeap, SymmetricBlocksShareTheirOffset) {
  on_every_rank([] {
    const int me = weft::rank();
    auto a = weft::allocate_symmetric<int>(10);
    auto local = weft::allocate<double>(3 + me);  // different sizes per rank: symmetric offsets unaffected
    auto b = weft::allocate_symmetric<char>(1000);
    EXPECT_EQ(a.rank(), me);
    const auto ea = extremes(a.offset()), eb = extremes(b.offset());
    EXPECT_EQ(ea[0], ea[1]);
    EXPECT_EQ(eb[0], eb[1]);
    EXPECT_NE(a.offset(), b.offset());
    EXPECT_EQ(a.offset() % 64, 0u);
    EXPECT_NE(local.offset(), a.offset());
    // Own memory is always addressable; it starts zeroed (fresh pages).
    ASSERT_NE(a.local(), nullptr);
    EXPECT_EQ(a.local()[9], 0);
    a.local()[9] = me;
    weft::free_symmetric(a);
    auto c = weft::allocate_symmetric<int>(10);  // takes the freed block again, everywhere
    EXPECT_EQ(c.offset(), a.offset());
    weft::free_symmetric(c);
    weft::free_symmetric(b);
    weft::deallocate(local);
  });
}

TEST(PgasHeap, LocalBlocksFromManyTasks) {
  on_every_rank([] {
    constexpr int tasks = 8, each = 50;
    std::vector<weft::future<std::vector<weft::global_ptr<long>>>> fs;
    for (int t = 0; t < tasks; ++t)
      fs.push_back(weft::async([t] {
        std::vector<weft::global_ptr<long>> got;
        for (int i = 0; i < each; ++i) {
          got.push_back(weft::allocate<long>(1 + static_cast<std::size_t>(i % 7)));
          *got.back().local() = t * 1000 + i;
        }
        return got;
      }));
    std::vector<weft::global_ptr<long>> all;
    for (int t = 0; t < tasks; ++t)
      for (auto& p : fs[static_cast<std::size_t>(t)].get()) all.push_back(p);
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());  // no block handed out twice
    for (std::size_t i = 1; i < all.size(); ++i) EXPECT_GE(all[i] - all[i - 1], 1);
    long sum = 0;
    for (auto& p : all) sum += *p.local();
    long want = 0;
    for (int t = 0; t < tasks; ++t)
      for (int i = 0; i < each; ++i) want += t * 1000 + i;
    EXPECT_EQ(sum, want);
    for (auto& p : all) weft::deallocate(p);
  });
}

// A block handed to another rank in a remote call; the receiver writes into
// it with a put, and the owner sees the data.
TEST(PgasHeap, GlobalPointerTravelsInRemoteCalls) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    auto mine = weft::allocate<int>(4);
    const int left = (me + n - 1) % n;
    weft::async_at(left, [](weft::global_ptr<int> p, int from) {
      const int v[4] = {from, from + 1, from + 2, from + 3};
      weft::put(p, std::span<const int>(v)).get();
    }, mine, me).get();
    for (int i = 0; i < 4; ++i) EXPECT_EQ(mine.local()[i], me + i);
    weft::barrier();
    weft::deallocate(mine);
  });
}

TEST(PgasHeap, ArithmeticAndComparison) {
  on_every_rank([] {
    auto p = weft::global_ptr<double>::at(weft::rank(), 64);
    auto q = p + 3;
    EXPECT_EQ(q.offset(), 64u + 24);
    EXPECT_EQ(q - p, 3);
    EXPECT_LT(p, q);
    EXPECT_EQ(--(++q) == q, true);
    EXPECT_TRUE(weft::global_ptr<int>{}.is_null());
    EXPECT_FALSE(static_cast<bool>(weft::global_ptr<int>{}));
    EXPECT_TRUE(p.is_local());
    EXPECT_EQ(weft::global_ptr<double>::from_local(p.local() + 2), p + 2);
    int on_stack = 0;
    EXPECT_TRUE(weft::global_ptr<int>::from_local(&on_stack).is_null());
    weft::global_span<double> s{p, 10};
    EXPECT_EQ(s.subspan(2, 3)[1], p + 3);
    EXPECT_THROW(s.subspan(8, 3), std::out_of_range);
  });
}
