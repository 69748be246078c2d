// Notified puts and completion queues: fields of every entry, exactly-once
// delivery under many concurrent operations from many tasks, waiting tasks.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "pattern.hpp"
#include "spmd_main.hpp"

namespace rma = weft::rma;
using weft::test::has_pattern;
using weft::test::mix64;
using weft::test::on_every_rank;
using weft::test::pattern;

// Every rank sends 4 notified blocks to every rank (itself too). Each
// arrival names its source, segment, offset, length and tag, and the data is
// already in place when the entry is seen.
TEST(RmaQueue, NotifiedPutsArriveWithTheirData) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    constexpr int per = 4;
    constexpr std::size_t block = 256;
    std::vector<std::byte> mem(block * per * n);
    rma::completion_queue arrivals;
    rma::segment seg = rma::register_memory(mem.data(), mem.size(), &arrivals);
    weft::barrier();

    auto seed = [](int from, int to, int k) { return std::uint64_t(from) * 7777 + std::uint64_t(to) * 77 + k; };
    std::vector<std::vector<std::byte>> src;
    std::vector<weft::future<void>> sent;
    src.reserve(static_cast<std::size_t>(n * per));
    for (int t = 0; t < n; ++t)
      for (int k = 0; k < per; ++k) {
        src.push_back(pattern(block, seed(me, t, k)));
        const rma::put_options o{.level = rma::completion_level::local, .notify = std::uint64_t(me) * 100 + k};
        sent.push_back(rma::put(t, seg.id(), (me * per + k) * block, src.back().data(), block, o));
      }

    std::vector<int> seen(static_cast<std::size_t>(n * per), 0);
    int wrong = 0;
    for (int i = 0; i < n * per; ++i) {
      const rma::completion a = arrivals.wait();
      const int from = a.rank, k = static_cast<int>(a.context % 100);
      const bool ok = a.kind == rma::completion_kind::arrival && from >= 0 && from < n &&
                      a.context == std::uint64_t(from) * 100 + k && k < per && a.segment == seg.id() &&
                      a.offset == (from * per + k) * block && a.bytes == block &&
                      has_pattern(mem.data() + a.offset, block, seed(from, me, k));
      if (!ok) {
        ++wrong;
        continue;
      }
      ++seen[static_cast<std::size_t>(from * per + k)];
    }
    EXPECT_EQ(wrong, 0) << "rank " << me;
    for (int i = 0; i < n * per; ++i) EXPECT_EQ(seen[i], 1) << "rank " << me << " arrival " << i;
    EXPECT_TRUE(arrivals.empty());
    for (auto& f : sent) f.get();
    weft::barrier();
    rma::deregister(seg);
  });
}

// 16 tasks per rank issue 4096 8-byte puts, then 4096 gets, spread over all
// ranks, all reporting to one queue per rank with a context each, while the
// main task drains it: every operation reports exactly once, with its fields,
// and the data is where it belongs.
TEST(RmaQueue, ManySmallOperationsFromManyTasks) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    constexpr int tasks = 16, per_task = 256, ops = tasks * per_task;
    std::vector<std::uint64_t> slots(static_cast<std::size_t>(n) * ops, 0);
    rma::segment seg = rma::register_memory(slots.data(), slots.size() * 8);
    const rma::segment_id id = seg.id();
    std::vector<std::uint64_t> values(ops);
    for (int k = 0; k < ops; ++k) values[k] = mix64(std::uint64_t(me) * ops + k);
    auto target_of = [me, n](int k) { return (me + k) % n; };
    auto offset_of = [me](int k) { return (std::size_t(me) * ops + k) * 8; };
    weft::barrier();

    rma::completion_queue cq;
    auto drain = [&](rma::completion_kind kind) {
      std::vector<int> seen(ops, 0);
      int wrong = 0;
      for (int i = 0; i < ops; ++i) {
        const rma::completion c = cq.wait();
        const int k = static_cast<int>(c.context);
        if (c.context >= std::uint64_t(ops) || c.kind != kind || c.rank != target_of(k) || c.segment != id ||
            c.offset != offset_of(k) || c.bytes != 8) {
          ++wrong;
          continue;
        }
        ++seen[k];
      }
      EXPECT_EQ(wrong, 0) << "rank " << me;
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), ops) << "rank " << me << ": lost or duplicated";
      EXPECT_TRUE(cq.empty());
    };

    // `tasks` tasks issue ops [t*per_task, (t+1)*per_task) each while this
    // task drains the queue.
    auto from_tasks = [&](auto issue, rma::completion_kind kind) {
      weft::task_group g;
      for (int t = 0; t < tasks; ++t)
        g.run([&, t] {
          for (int k = t * per_task; k < (t + 1) * per_task; ++k) issue(k);
        });
      drain(kind);
      g.wait();
    };

    from_tasks([&](int k) { rma::put(target_of(k), id, offset_of(k), &values[k], 8, cq, std::uint64_t(k)); },
               rma::completion_kind::put_remote);
    weft::barrier();  // every rank's puts completed remotely

    int wrong = 0;
    for (int from = 0; from < n; ++from)
      for (int k = 0; k < ops; ++k) {
        const std::uint64_t expect = (from + k) % n == me ? mix64(std::uint64_t(from) * ops + k) : 0;
        wrong += slots[std::size_t(from) * ops + k] != expect;
      }
    EXPECT_EQ(wrong, 0) << "rank " << me;

    std::vector<std::uint64_t> back(ops, 0);
    from_tasks([&](int k) { rma::get(target_of(k), id, offset_of(k), &back[k], 8, cq, std::uint64_t(k)); },
               rma::completion_kind::get);
    EXPECT_TRUE(back == values) << "rank " << me;
    weft::barrier();
    rma::deregister(seg);
  });
}

// Tasks blocked in wait() let the workers run the task that feeds them.
TEST(RmaQueue, WaitingTasksAreWokenByPushes) {
  on_every_rank([] {
    rma::completion_queue cq;
    std::atomic<std::uint64_t> sum{0};
    weft::task_group g;
    for (int i = 0; i < 8; ++i) g.run([&] { sum += cq.wait().context; });
    g.run([&] {
      for (std::uint64_t v = 1; v <= 8; ++v) cq.push(rma::completion{rma::completion_kind::get, 0, 0, 0, 0, v});
    });
    g.wait();
    EXPECT_EQ(sum.load(), 36u);
    EXPECT_TRUE(cq.empty());
  });
}

// The queue on its own, from plain threads: FIFO per producer, nothing lost.
TEST(RmaQueue, PlainThreadsProduceAndConsume) {
  rma::completion_queue cq;
  rma::completion c;
  EXPECT_FALSE(cq.poll(c));
  EXPECT_TRUE(cq.empty());
  cq.push(rma::completion{rma::completion_kind::arrival, 3, 1, 2, 4, 5});
  EXPECT_EQ(cq.size(), 1u);
  ASSERT_TRUE(cq.poll(c));
  EXPECT_EQ(c.kind, rma::completion_kind::arrival);
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.context, 5u);

  constexpr int producers = 4, each = 2000;
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&cq, p] {
      for (int i = 0; i < each; ++i)
        cq.push(rma::completion{rma::completion_kind::get, p, 0, 0, 0, std::uint64_t(i)});
    });
  std::vector<std::uint64_t> next(producers, 0);
  int out_of_order = 0;
  for (int i = 0; i < producers * each; ++i) {
    rma::completion e = (i % 2) ? cq.wait() : rma::completion{};
    if (i % 2 == 0)
      while (!cq.poll(e)) std::this_thread::yield();
    out_of_order += e.context != next[static_cast<std::size_t>(e.rank)]++;
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(out_of_order, 0);
  EXPECT_TRUE(cq.empty());
}
