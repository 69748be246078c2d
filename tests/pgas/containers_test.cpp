// global_vector (block-distributed and local) and dist_object.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "spmd_main.hpp"

using weft::test::on_every_rank;

TEST(PgasContainers, DistributedVectorAcrossOwners) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    constexpr std::size_t size = 1001;  // not a multiple of the rank count
    auto v = weft::global_vector<int>::distributed(size);
    EXPECT_EQ(v.size(), size);
    auto mine = v.local_part();
    for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = -1;
    weft::barrier();
    // Rank 0 writes everything in one call spanning every owner.
    if (me == 0) {
      std::vector<int> all(size);
      std::iota(all.begin(), all.end(), 0);
      v.put(0, all).get();
    }
    weft::barrier();
    for (std::size_t k = 0; k < mine.size(); ++k) EXPECT_EQ(mine[k], static_cast<int>(v.local_first() + k));
    std::size_t total = mine.size();
    EXPECT_EQ(weft::allreduce(total, std::plus<>{}), size);
    // Every rank reads a range that straddles a block boundary.
    const std::size_t first = v.block_size() - 3;
    std::vector<int> got(std::min<std::size_t>(7, size - first));
    v.get(first, std::span<int>(got)).get();
    for (std::size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], static_cast<int>(first + k));
    EXPECT_EQ(weft::get(v[size - 1]).get(), static_cast<int>(size - 1));
    EXPECT_EQ(v.owner(size - 1), static_cast<int>((size - 1) / v.block_size()));
    EXPECT_LT(v.owner(size - 1), n);
    EXPECT_THROW(v.get(size - 1, std::span<int>(got)), std::out_of_range);
    weft::barrier();
    v.destroy();
  });
}

TEST(PgasContainers, LocalVectorSharedByHandle) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    // Rank 0's vector, handed to everyone; each rank fills its slot.
    auto v = me == 0 ? weft::global_vector<long>::local(static_cast<std::size_t>(n)) : weft::global_vector<long>{};
    v = weft::broadcast(v, 0);
    weft::put(v[static_cast<std::size_t>(me)], 10L * me).get();
    weft::barrier();
    if (me == 0) {
      auto all = v.local_part();
      ASSERT_EQ(all.size(), static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], 10L * r);
    }
    weft::barrier();
    if (me == 0) v.destroy();
  });
}

TEST(PgasContainers, DistObjectFetchesPeers) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    weft::dist_object<std::string> name("rank-" + std::to_string(me));
    weft::dist_object<int> square(me * me);
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(name.fetch(r).get(), "rank-" + std::to_string(r));
      EXPECT_EQ(square.fetch(r).get(), r * r);
    }
    weft::barrier();  // every peer has read the first values
    *square = -1;     // local changes are what peers see next
    weft::barrier();
    EXPECT_EQ(square.fetch((me + 1) % n).get(), -1);
  });
}
