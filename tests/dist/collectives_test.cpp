#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "spmd_main.hpp"

using weft::test::on_every_rank;

TEST(Collectives, BarrierBroadcastReduce) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    weft::barrier();
    EXPECT_EQ(weft::broadcast(me == 0 ? std::string("from root") : std::string(), 0), "from root");
    const int root = n - 1;
    EXPECT_EQ(weft::broadcast(me * 10, root), root * 10);
    long sum = weft::reduce(long(me + 1), std::plus<>{}, root);
    if (me == root) {
      EXPECT_EQ(sum, long(n) * (n + 1) / 2);
    }
    EXPECT_EQ(weft::allreduce(long(me + 1), std::plus<>{}), long(n) * (n + 1) / 2);
    EXPECT_EQ(weft::allreduce(me, [](int a, int b) { return a > b ? a : b; }), n - 1);
    // Non-commutative: string concatenation must come out in rank order.
    std::string expect;
    for (int r = 0; r < n; ++r) expect += std::to_string(r) + ",";
    EXPECT_EQ(weft::allreduce(std::to_string(me) + ",", std::plus<>{}), expect);
  });
}

TEST(Collectives, GatherAllgatherVectors) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    auto g = weft::gather(std::vector<int>(me + 1, me), 0);
    if (me == 0) {
      ASSERT_EQ(int(g.size()), n);
      for (int r = 0; r < n; ++r) EXPECT_EQ(g[r], std::vector<int>(r + 1, r));
    } else {
      EXPECT_TRUE(g.empty());
    }
    auto all = weft::allgather(me * me);
    ASSERT_EQ(int(all.size()), n);
    for (int r = 0; r < n; ++r) EXPECT_EQ(all[r], r * r);
  });
}

TEST(Collectives, AsyncFormsAndManyInARow) {
  on_every_rank([] {
    const int n = weft::nranks();
    std::vector<weft::future<long>> fs;
    for (int i = 0; i < 200; ++i) fs.push_back(weft::allreduce_async(long(i), std::plus<>{}));
    for (int i = 0; i < 200; ++i) EXPECT_EQ(fs[i].get(), long(i) * n);
    auto b = weft::barrier_async();
    b.get();
  });
}

TEST(Collectives, FromInsideNestedTasks) {
  on_every_rank([] {
    long v = weft::async([] {
               return weft::async([] { return weft::allreduce(1L, std::plus<>{}); }).get();
             }).get();
    EXPECT_EQ(v, weft::nranks());
  });
}
