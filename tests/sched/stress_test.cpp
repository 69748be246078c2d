#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_runtime.hpp"

using weft::test::scoped_runtime;

TEST(Stress, MillionTinyTasksComplete) {
  scoped_runtime rt({"--weft:threads=2"});
  std::atomic<long> count{0};
  weft::async([&] {
    weft::task_group g;
    for (int i = 0; i < 1000; ++i)
      g.run([&] {
        weft::task_group inner;
        for (int j = 0; j < 1000; ++j) inner.run([&] { count.fetch_add(1, std::memory_order_relaxed); });
        inner.wait();
      });
    g.wait();
  }).get();
  EXPECT_EQ(count.load(), 1000000);
}

TEST(Stress, MillionFuturesFromFlatLoop) {
  scoped_runtime rt({"--weft:threads=2"});
  long total = weft::async([] {
    long sum = 0;
    for (int batch = 0; batch < 100; ++batch) {
      std::vector<weft::future<int>> fs;
      fs.reserve(10000);
      for (int i = 0; i < 10000; ++i) fs.push_back(weft::async([i] { return i & 1; }));
      for (auto& f : fs) sum += f.get();
    }
    return sum;
  }).get();
  EXPECT_EQ(total, 500000);
}

TEST(Stress, TenThousandFibersSuspendedOnOneWorker) {
  scoped_runtime rt({"--weft:threads=1"});
#if defined(__SANITIZE_THREAD__)
  constexpr int n = 2000;  // TSan maps a trace region per live fiber and runs out near 8K
#else
  constexpr int n = 10000;
#endif
  weft::promise<int> gate;
  weft::shared_future<int> open = gate.get_future().share();
  std::atomic<int> parked{0};
  std::vector<weft::future<int>> fs;
  fs.reserve(n);
  for (int i = 0; i < n; ++i)
    fs.push_back(weft::async([open, &parked] {
      parked.fetch_add(1);
      return open.get() + 1;  // every one of these suspends its fiber
    }));
  while (parked.load() < n) std::this_thread::yield();
  // All n tasks have started and none can finish: n fibers are suspended.
  for (auto& f : fs) EXPECT_FALSE(f.is_ready());
  gate.set_value(1);
  long sum = 0;
  for (auto& f : fs) sum += f.get();
  EXPECT_EQ(sum, 2L * n);
}

namespace {
int depth_future(int n) { return n == 0 ? 0 : weft::async(depth_future, n - 1).get() + 1; }

int depth_group(int n) {
  if (n == 0) return 0;
  int r = 0;
  weft::task_group g;
  g.run([&r, n] { r = depth_group(n - 1); });
  g.wait();
  return r + 1;
}

// Recursion that blocks at every level on work another worker must do.
int depth_pingpong(int n) {
  if (n == 0) return 0;
  weft::promise<int> p;
  auto f = p.get_future();
  std::thread([&p, n] { p.set_value(n); }).detach();
  int v = f.get();
  return depth_pingpong(n - 1) + (v == n ? 1 : 0);
}
}  // namespace

TEST(Stress, DeepRecursionDoesNotOverflow) {
  scoped_runtime rt({"--weft:threads=2"});
  EXPECT_EQ(weft::async(depth_future, 10000).get(), 10000);
  EXPECT_EQ(weft::async(depth_group, 10000).get(), 10000);
}

TEST(Stress, DeepRecursionOneWorker) {
  scoped_runtime rt({"--weft:threads=1"});
  EXPECT_EQ(weft::async(depth_future, 10000).get(), 10000);
}

TEST(Stress, BlockingAtEveryLevel) {
  scoped_runtime rt({"--weft:threads=2"});
  EXPECT_EQ(weft::async(depth_pingpong, 200).get(), 200);
}

TEST(Stress, YieldLetsOthersRun) {
  scoped_runtime rt({"--weft:threads=1"});
  std::atomic<bool> flag{false};
  // On one worker, the spinner only finishes if yield lets the setter run.
  auto spinner = weft::async([&] {
    int spins = 0;
    while (!flag.load()) {
      weft::this_task::yield();
      ++spins;
    }
    return spins;
  });
  auto setter = weft::async([&] { flag = true; });
  setter.get();
  EXPECT_GE(spinner.get(), 0);
}

TEST(Stress, HundredThousandYieldsOnRecycledFibers) {
  // Every yield parks the fiber and resumes it from a recycled one; per-fiber
  // state (stacks, sanitizer bookkeeping) must not grow with the count.
  scoped_runtime rt({"--weft:threads=2"});
#if defined(__SANITIZE_THREAD__)
  // A fiber switch under TSan costs a few ms on a 2-core host (its
  // per-fiber shadow state): 100000 took six minutes. 5000 still recycles
  // each fiber thousands of times.
  constexpr long yields = 5000;
#else
  constexpr long yields = 100000;
#endif
  auto a = weft::async([] {
    long n = 0;
    for (; n < yields; ++n) weft::this_task::yield();
    return n;
  });
  auto b = weft::async([] {
    long n = 0;
    for (; n < yields; ++n) weft::this_task::yield();
    return n;
  });
  EXPECT_EQ(a.get() + b.get(), 2 * yields);
}
