#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_runtime.hpp"

using weft::test::scoped_runtime;

namespace {

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

long fib_future(int n) {
  if (n < 2) return n;
  auto a = weft::async(fib_future, n - 1);
  long b = fib_future(n - 2);
  return a.get() + b;
}

long fib_group(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  weft::task_group g;
  g.run([&a, n] { a = fib_group(n - 1); });
  b = fib_group(n - 2);
  g.wait();
  return a + b;
}

}  // namespace

TEST(ForkJoin, Fib30ThroughFutures) {
  scoped_runtime rt({"--weft:threads=2"});
  EXPECT_EQ(weft::async(fib_future, 30).get(), 832040);
}

TEST(ForkJoin, Fib30ThroughTaskGroup) {
  scoped_runtime rt({"--weft:threads=2"});
  EXPECT_EQ(weft::async(fib_group, 30).get(), 832040);
}

TEST(ForkJoin, FibFromMainThreadAndOneWorker) {
  scoped_runtime rt({"--weft:threads=1"});
  EXPECT_EQ(fib_future(20), fib_serial(20));  // main thread blocks in get
  EXPECT_EQ(fib_group(20), fib_serial(20));
}

TEST(ForkJoin, TaskGroupRethrowsFirstException) {
  scoped_runtime rt({"--weft:threads=2"});
  weft::task_group g;
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i)
    g.run([&ran, i] {
      ran++;
      if (i % 10 == 3) throw std::runtime_error("task failed");
    });
  EXPECT_THROW(g.wait(), std::runtime_error);
  EXPECT_EQ(ran.load(), 100);  // every task still ran
  // The group is reusable after wait().
  g.run([&ran] { ran++; });
  EXPECT_NO_THROW(g.wait());
  EXPECT_EQ(ran.load(), 101);
}

TEST(ForkJoin, NestedTaskGroupRunsIntoSameGroup) {
  scoped_runtime rt({"--weft:threads=2"});
  std::atomic<int> count{0};
  weft::task_group g;
  for (int i = 0; i < 10; ++i)
    g.run([&] {
      for (int j = 0; j < 10; ++j) g.run([&] { count++; });
    });
  g.wait();
  EXPECT_EQ(count.load(), 100);
}

TEST(ParallelFor, VisitsEveryIndexOnce) {
  scoped_runtime rt({"--weft:threads=2"});
  for (long grain : {1L, 7L, 64L, 100000L}) {
    std::vector<std::atomic<int>> seen(10007);
    weft::parallel_for(0L, 10007L, grain, [&](long i) { seen[i]++; });
    for (auto& s : seen) ASSERT_EQ(s.load(), 1) << "grain " << grain;
  }
  int calls = 0;
  weft::parallel_for(5, 5, 1, [&](int) { calls++; });
  weft::parallel_for(5, 3, 1, [&](int) { calls++; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelFor, ExceptionReachesCaller) {
  scoped_runtime rt({"--weft:threads=2"});
  EXPECT_THROW(weft::parallel_for(0, 1000, 10,
                                  [](int i) {
                                    if (i == 777) throw std::range_error("777");
                                  }),
               std::range_error);
}

// The throwing iteration's task waits for its siblings before rethrowing;
// that wait may resume it on another worker thread, where a bare `throw;`
// has no active exception (std::terminate). Slow siblings that yield make
// the resumption happen elsewhere often.
TEST(ParallelFor, ExceptionSurvivesResumingOnAnotherThread) {
  scoped_runtime rt({"--weft:threads=2"});
  int caught = 0;
  for (int round = 0; round < 200; ++round) {
    auto f = weft::async([] {
      weft::parallel_for(0, 8, 1, [](int i) {
        if (i == 0) throw std::range_error("first");
        for (int k = 0; k < 20; ++k) weft::this_task::yield();
      });
    });
    try {
      f.get();
    } catch (const std::range_error& e) {
      if (std::string(e.what()) == "first") ++caught;
    }
  }
  EXPECT_EQ(caught, 200);
}

TEST(ParallelReduce, SumsAndMatchesSerial) {
  scoped_runtime rt({"--weft:threads=2"});
  long n = 1000003;
  long s = weft::parallel_reduce(0L, n, 1000L, 0L, [](long i) { return i; }, [](long a, long b) { return a + b; });
  EXPECT_EQ(s, n * (n - 1) / 2);
  double m = weft::parallel_reduce(
      0, 1000, 3, -1.0, [](int i) { return double((i * 37) % 1001); }, [](double a, double b) { return a > b ? a : b; });
  EXPECT_DOUBLE_EQ(m, 1000.0);
  EXPECT_EQ(weft::parallel_reduce(0, 0, 1, 5, [](int) { return 1; }, [](int a, int b) { return a + b; }), 5);
}

TEST(ParallelFor, InsideTasksFromManyRoots) {
  scoped_runtime rt({"--weft:threads=2"});
  std::vector<weft::future<long>> roots;
  for (int r = 0; r < 8; ++r)
    roots.push_back(weft::async([] {
      std::atomic<long> acc{0};
      weft::parallel_for(0, 5000, 16, [&](int i) { acc += i; });
      return acc.load();
    }));
  for (auto& f : roots) EXPECT_EQ(f.get(), 4999L * 5000 / 2);
}

// yield_if_others_ready gives way only to work queued on this worker, and
// resumes after it ran; with nothing queued it returns at once.
TEST(Yield, IfOthersReadyGivesWayOnlyToQueuedWork) {
  scoped_runtime rt({"--weft:threads=1"});
  EXPECT_FALSE(weft::this_task::yield_if_others_ready());  // not on a worker
  weft::async([] {
    EXPECT_FALSE(weft::this_task::yield_if_others_ready());
    std::atomic<int> ran{0};
    auto queued = weft::async([&ran] { ran.fetch_add(1); });  // on this worker's queue
    EXPECT_EQ(ran.load(), 0);
    EXPECT_TRUE(weft::this_task::yield_if_others_ready());
    EXPECT_EQ(ran.load(), 1);  // the only worker ran it before resuming us
    EXPECT_FALSE(weft::this_task::yield_if_others_ready());
    queued.get();
  }).get();
}
