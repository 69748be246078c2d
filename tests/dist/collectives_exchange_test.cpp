// scatter, alltoall, alltoallv, exclusive_scan, and collectives of every
// kind back to back, in flight together, and inside busy tasks.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "spmd_main.hpp"

using weft::test::on_every_rank;

namespace {
std::string cell(int from, int to) { return std::to_string(from) + ">" + std::to_string(to); }

void check_alltoall() {
  const int me = weft::rank(), n = weft::nranks();
  std::vector<std::string> out;
  for (int d = 0; d < n; ++d) out.push_back(cell(me, d));
  auto in = weft::alltoall(out);
  ASSERT_EQ(int(in.size()), n);
  for (int s = 0; s < n; ++s) EXPECT_EQ(in[s], cell(s, me));
  auto f = weft::alltoall_async(std::vector<int>(std::size_t(n), me));
  auto ints = f.get();
  for (int s = 0; s < n; ++s) EXPECT_EQ(ints[s], s);
  EXPECT_THROW(weft::alltoall(std::vector<int>(std::size_t(n) + 1)), std::invalid_argument);
}

void check_alltoallv() {
  const int me = weft::rank(), n = weft::nranks();
  // Rank s sends (s + d) % 3 elements to rank d, each s * 1000 + d; some counts are 0.
  std::vector<long> values;
  std::vector<std::size_t> counts;
  for (int d = 0; d < n; ++d) {
    counts.push_back(std::size_t((me + d) % 3));
    values.insert(values.end(), counts.back(), long(me) * 1000 + d);
  }
  auto got = weft::alltoallv(values, counts);
  ASSERT_EQ(int(got.counts.size()), n);
  std::vector<long> expect;
  for (int s = 0; s < n; ++s) {
    EXPECT_EQ(got.counts[s], std::size_t((s + me) % 3));
    expect.insert(expect.end(), std::size_t((s + me) % 3), long(s) * 1000 + me);
  }
  EXPECT_EQ(got.values, expect);
  // Not trivially copyable elements, through the future form.
  std::vector<std::string> words;
  std::vector<std::size_t> one_each(std::size_t(n), 1);
  for (int d = 0; d < n; ++d) words.push_back(cell(me, d));
  auto w = weft::alltoallv_async(words, one_each).get();
  ASSERT_EQ(int(w.values.size()), n);
  for (int s = 0; s < n; ++s) EXPECT_EQ(w.values[s], cell(s, me));
  EXPECT_THROW(weft::alltoallv(values, std::vector<std::size_t>(std::size_t(n), 99)), std::invalid_argument);
}

void check_exclusive_scan() {
  const int me = weft::rank();
  EXPECT_EQ(weft::exclusive_scan(long(me + 1), 0L, std::plus<>{}), long(me) * (me + 1) / 2);
  std::string expect = "start:";
  for (int r = 0; r < me; ++r) expect += std::to_string(r) + ",";
  EXPECT_EQ(weft::exclusive_scan(std::to_string(me) + ",", std::string("start:"), std::plus<>{}), expect);
  EXPECT_EQ(weft::exclusive_scan_async(1, 100, std::plus<>{}).get(), 100 + me);
}

void scatter_async_and_wrong_count() {
  const int me = weft::rank(), n = weft::nranks();
  std::vector<std::vector<int>> rows;
  if (me == 0)
    for (int r = 0; r < n; ++r) rows.emplace_back(std::size_t(r), r);
  EXPECT_EQ(weft::scatter_async(rows, 0).get(), std::vector<int>(std::size_t(me), me));
  // Every rank is the root here, so every rank stops before sending anything.
  if (n > 1) {
    EXPECT_THROW(weft::scatter(std::vector<int>(std::size_t(n) - 1), me), std::invalid_argument);
  }
}

void every_kind_back_to_back_and_in_flight_together() {
  const int me = weft::rank(), n = weft::nranks();
  for (int round = 0; round < (n > 8 ? 1 : 3); ++round) {  // 64 ranks: each step costs a scheduler slice
    auto bc = weft::broadcast_async(round * 7, round % n);
    auto ag = weft::allgather_async(me + round);
    auto sc = weft::exclusive_scan_async(1, 0, std::plus<>{});
    auto ar = weft::allreduce_async(std::vector<int>(3, me), weft::elementwise{std::plus<>{}});
    auto ba = weft::barrier_async();
    auto ga = weft::gather_async(std::to_string(me), n - 1);
    auto a2a = weft::alltoall_async(std::vector<int>(std::size_t(n), me * round));
    // Waited for in another order than issued.
    auto a2a_v = a2a.get();
    for (int s = 0; s < n; ++s) EXPECT_EQ(a2a_v[s], s * round);
    ba.get();
    auto ga_v = ga.get();
    if (me == n - 1) {
      ASSERT_EQ(int(ga_v.size()), n);
      for (int r = 0; r < n; ++r) EXPECT_EQ(ga_v[r], std::to_string(r));
    }
    EXPECT_EQ(ar.get(), std::vector<int>(3, n * (n - 1) / 2));
    EXPECT_EQ(sc.get(), me);
    auto ag_v = ag.get();
    for (int r = 0; r < n; ++r) EXPECT_EQ(ag_v[r], r + round);
    EXPECT_EQ(bc.get(), round * 7);
    // And blocking ones in between.
    EXPECT_EQ(weft::allreduce(1, std::plus<>{}), n);
    weft::barrier();
  }
}

void inside_a_task_while_other_tasks_run() {
  const int n = weft::nranks();
  std::atomic<long> work{0};
  weft::task_group busy;
  for (int t = 0; t < 4; ++t)
    busy.run([&] {
      // Small tasks that keep the workers occupied meanwhile.
      for (int round = 0; round < 100; ++round) {
        weft::task_group inner;
        for (int i = 0; i < 8; ++i) inner.run([&] { work.fetch_add(1, std::memory_order_relaxed); });
        inner.wait();
      }
    });
  auto result = weft::async([n] {
    long total = 0;
    for (int i = 0; i < 4; ++i) {
      total += weft::allreduce(long(i), std::plus<>{});
      total += weft::broadcast(long(i), i % n);
    }
    return total;
  });
  const long got = result.get();
  busy.wait();
  EXPECT_EQ(got, 6L * n + 6L);
  EXPECT_EQ(work.load(), 4 * 100 * 8);
}

}  // namespace

TEST(CollectivesExchange, Alltoall) { on_every_rank(check_alltoall); }
TEST(CollectivesExchange, Alltoallv) { on_every_rank(check_alltoallv); }
TEST(CollectivesExchange, ExclusiveScan) { on_every_rank(check_exclusive_scan); }
TEST(CollectivesExchange, ScatterAsyncAndWrongCount) { on_every_rank(scatter_async_and_wrong_count); }
TEST(CollectivesExchange, EveryKindBackToBackAndInFlightTogether) { on_every_rank(every_kind_back_to_back_and_in_flight_together); }
TEST(CollectivesExchange, InsideATaskWhileOtherTasksRun) { on_every_rank(inside_a_task_while_other_tasks_run); }

// All of the above in one run: what the 64-rank test runs (starting and
// finalizing 64 ranks costs more than the checks).
TEST(CollectivesOneRun, Exchanges) {
  on_every_rank([] {
    check_alltoall();
    check_alltoallv();
    check_exclusive_scan();
    scatter_async_and_wrong_count();
    every_kind_back_to_back_and_in_flight_together();
    inside_a_task_while_other_tasks_run();
  });
}
