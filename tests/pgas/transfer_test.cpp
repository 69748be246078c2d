// put and get between every pair of ranks: values, spans, strided blocks,
// batches, and the per-kind waits.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "spmd_main.hpp"

using weft::test::on_every_rank;

namespace {
int value_of(int from, int to, int i) { return 1000000 * from + 1000 * to + i; }
}  // namespace

TEST(PgasTransfer, PutGetEveryPair) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    for (std::size_t block : {std::size_t{3}, std::size_t{50000}}) {  // inline and zero-copy messages
      auto slots = weft::allocate_symmetric<int>(block * static_cast<std::size_t>(n));
      std::vector<std::vector<int>> out(static_cast<std::size_t>(n));
      std::vector<weft::future<void>> done;
      for (int t = 0; t < n; ++t) {
        auto& o = out[static_cast<std::size_t>(t)];
        for (std::size_t i = 0; i < block; ++i) o.push_back(value_of(me, t, static_cast<int>(i)));
        done.push_back(weft::put(slots.on(t) + me * static_cast<std::ptrdiff_t>(block), std::span<const int>(o)));
      }
      for (auto& f : done) f.get();
      weft::barrier();
      for (int from = 0; from < n; ++from)
        for (std::size_t i = 0; i < block; i += block / 3 + 1)
          ASSERT_EQ(slots.local()[static_cast<std::size_t>(from) * block + i], value_of(from, me, static_cast<int>(i)));
      // Back again: every rank reads its blocks from everyone.
      for (int t = 0; t < n; ++t) {
        std::vector<int> in(block);
        weft::get(slots.on(t) + me * static_cast<std::ptrdiff_t>(block), std::span<int>(in)).get();
        EXPECT_EQ(in, out[static_cast<std::size_t>(t)]);
        EXPECT_EQ(weft::get(slots.on(t) + me * static_cast<std::ptrdiff_t>(block) + 1).get(), value_of(me, t, 1));
      }
      weft::free_symmetric(slots);
    }
  });
}

TEST(PgasTransfer, ValuesAreCopiedAtTheCall) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    auto cell = weft::allocate_symmetric<long>(static_cast<std::size_t>(n));
    for (int t = 0; t < n; ++t) {
      long v = 7L * me + t;
      (void)weft::put(cell.on(t) + me, v);  // not waited for: fence below
      v = -1;
    }
    weft::fence();
    weft::barrier();
    for (int from = 0; from < n; ++from) EXPECT_EQ(cell.local()[from], 7L * from + me);
    weft::free_symmetric(cell);
  });
}

// A halo plane: column k of a row-major nx x ny block on the right
// neighbour (stride ny), from a contiguous buffer here; then read back.
TEST(PgasTransfer, StridedBlocksAndBatches) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    constexpr std::size_t nx = 40, ny = 6;
    auto grid = weft::allocate_symmetric<double>(nx * ny + static_cast<std::size_t>(n));  // + a cell per rank for the batch
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    std::vector<double> column(nx);
    std::iota(column.begin(), column.end(), 100.0 * me);
    weft::put_strided(grid.on(right) + 2, ny, column.data(), 1, 1, nx).get();
    weft::barrier();
    for (std::size_t x = 0; x < nx; ++x) EXPECT_EQ(grid.local()[x * ny + 2], 100.0 * left + static_cast<double>(x));
    std::vector<double> back(nx * 2);
    weft::get_strided(grid.on(right) + 2, ny, back.data(), 2, 1, nx).get();
    for (std::size_t x = 0; x < nx; ++x) EXPECT_EQ(back[2 * x], 100.0 * me + static_cast<double>(x));

    weft::transfer_batch batch;
    const double mine = me;
    double single = -1;
    for (int t = 0; t < n; ++t)
      batch.put(grid.on(t) + static_cast<std::ptrdiff_t>(nx * ny) + me, std::span<const double>(&mine, 1));
    batch.get(grid.on(left) + 2, std::span<double>(&single, 1));
    batch.submit().get();
    EXPECT_EQ(single, 100.0 * ((left + n - 1) % n));
    weft::barrier();
    for (int from = 0; from < n; ++from) EXPECT_EQ(grid.local()[nx * ny + static_cast<std::size_t>(from)], from);
    weft::free_symmetric(grid);
  });
}

// Many tasks put without waiting; wait_puts / fence make them visible.
TEST(PgasTransfer, FenceCompletesEverything) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    constexpr int per_task = 200, tasks = 4;
    auto cells = weft::allocate_symmetric<int>(static_cast<std::size_t>(n * tasks * per_task));
    weft::task_group g;
    std::vector<std::vector<int>> values(tasks, std::vector<int>(per_task));
    for (int t = 0; t < tasks; ++t)
      g.run([&, t] {
        for (int i = 0; i < per_task; ++i) {
          auto& v = values[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)];
          v = me * 100000 + t * 1000 + i;
          const int target = (me + i) % n;
          (void)weft::put(cells.on(target) + (me * tasks + t) * per_task + i, std::span<const int>(&v, 1));
        }
      });
    g.wait();
    weft::wait_puts();
    weft::barrier();
    for (int from = 0; from < n; ++from)
      for (int t = 0; t < tasks; ++t)
        for (int i = 0; i < per_task; ++i)
          if ((from + i) % n == me) {
            ASSERT_EQ(cells.local()[(from * tasks + t) * per_task + i], from * 100000 + t * 1000 + i);
          }
    weft::fence();
    weft::free_symmetric(cells);
  });
}
