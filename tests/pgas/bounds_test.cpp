// The range checks refuse nothing that lies inside a heap: the last bytes of
// every rank's heap are reachable by every kind of access, and empty
// transfers at the very end are allowed. (Accesses past the end end the job:
// pgas_failing_job and the pgas_fail_* tests.)
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "spmd_main.hpp"

using weft::test::on_every_rank;

namespace {

/// The end of this rank's heap: rank-local blocks grow down from it, and
/// every test starts with an empty heap (a fresh weft::run).
std::uint64_t heap_end_from_top_block(weft::global_ptr<std::int64_t> top) {
  return top.offset() + 8 * sizeof(std::int64_t);
}

}  // namespace

TEST(PgasBounds, LastBytesOfEveryHeapAreReachable) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    auto top = weft::allocate<std::int64_t>(8);  // the 64 bytes at the end of the heap
    const std::uint64_t end = heap_end_from_top_block(top);
    weft::barrier();
    const int right = (me + 1) % n;
    auto last = weft::global_ptr<std::int64_t>::at(right, end - sizeof(std::int64_t));
    // Writes by one rank per heap: this rank is its right neighbour's only writer.
    weft::put(last, std::int64_t{100 + me}).get();
    EXPECT_EQ(weft::get(last).get(), 100 + me);
    const std::array<std::int64_t, 8> row{1, 2, 3, 4, 5, 6, 7, 8};
    weft::put(last - 7, std::span<const std::int64_t>(row)).get();
    std::array<std::int64_t, 8> back{};
    weft::get(last - 7, std::span<std::int64_t>(back)).get();
    EXPECT_EQ(back, row);
    EXPECT_EQ(weft::atomic_fetch_add(last, std::int64_t{10}).get(), 8);
    EXPECT_EQ(weft::atomic_load(last).get(), 18);
    // Every other element of the last 8, and back into one block.
    weft::put_strided(last - 6, 2, row.data(), 1, 1, 4).get();
    std::array<std::int64_t, 4> odd{};
    weft::get_strided(last - 6, 2, odd.data(), 1, 1, 4).get();
    EXPECT_EQ(odd, (std::array<std::int64_t, 4>{1, 2, 3, 4}));
    {
      auto c = weft::make_checkout(last - 7, 8, weft::checkout_mode::read);
      EXPECT_EQ(c[0], 1);
      EXPECT_EQ(c[7], 4);
    }
    // Empty transfers at the very end of the heap touch nothing and are allowed.
    auto past = weft::global_ptr<std::int64_t>::at(right, end);
    weft::put(past, std::span<const std::int64_t>()).get();
    weft::get(past, std::span<std::int64_t>()).get();
    weft::barrier();
    weft::deallocate(top);
  });
}
