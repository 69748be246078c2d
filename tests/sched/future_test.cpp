#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_runtime.hpp"

using weft::test::scoped_runtime;

TEST(Future, AsyncReturnsValue) {
  scoped_runtime rt({"--weft:threads=2"});
  auto f = weft::async([](int a, int b) { return a * b; }, 6, 7);
  EXPECT_EQ(f.get(), 42);
  EXPECT_FALSE(f.valid());
}

TEST(Future, VoidAndMoveOnlyValues) {
  scoped_runtime rt({"--weft:threads=2"});
  std::atomic<int> hit{0};
  weft::async([&] { hit = 1; }).get();
  EXPECT_EQ(hit.load(), 1);
  auto f = weft::async([] { return std::make_unique<int>(5); });
  std::unique_ptr<int> p = f.get();
  EXPECT_EQ(*p, 5);
  auto g = weft::async([](std::unique_ptr<int> q) { return *q + 1; }, std::make_unique<int>(9));
  EXPECT_EQ(g.get(), 10);
}

TEST(Future, GetOnEmptyFutureThrows) {
  scoped_runtime rt({"--weft:threads=1"});
  weft::future<int> f;
  EXPECT_THROW(f.get(), weft::future_error);
  auto g = weft::async([] { return 1; });
  g.get();
  EXPECT_THROW(g.get(), weft::future_error);
}

TEST(Future, ExceptionPropagatesThroughGet) {
  scoped_runtime rt({"--weft:threads=2"});
  auto f = weft::async([]() -> int { throw std::runtime_error("boom"); });
  try {
    f.get();
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom");
  }
}

TEST(Future, ThenChainsAndPropagatesExceptions) {
  scoped_runtime rt({"--weft:threads=2"});
  auto f = weft::async([] { return 20; }).then([](weft::future<int> x) { return x.get() + 1; }).then(
      [](weft::future<int> x) { return std::to_string(x.get() * 2); });
  EXPECT_EQ(f.get(), "42");

  auto bad = weft::async([]() -> int { throw std::logic_error("first"); }).then([](weft::future<int> x) {
    return x.get() + 1;  // rethrows "first"
  });
  EXPECT_THROW(bad.get(), std::logic_error);

  auto thrower = weft::make_ready_future(1).then([](weft::future<int>) -> int { throw std::out_of_range("in then"); });
  EXPECT_THROW(thrower.get(), std::out_of_range);
}

TEST(Future, ThenOnReadyAndOnSharedFuture) {
  scoped_runtime rt({"--weft:threads=2"});
  auto r = weft::make_ready_future(std::string("a")).then([](weft::future<std::string> s) { return s.get() + "b"; });
  EXPECT_EQ(r.get(), "ab");
  weft::shared_future<int> s = weft::async([] { return 3; }).share();
  auto a = s.then([](weft::shared_future<int> x) { return x.get() + 1; });
  auto b = s.then([](weft::shared_future<int> x) { return x.get() + 2; });
  EXPECT_EQ(a.get() + b.get(), 9);
  EXPECT_EQ(s.get(), 3);
}

TEST(Future, WhenAllVariadic) {
  scoped_runtime rt({"--weft:threads=2"});
  auto all = weft::when_all(weft::async([] { return 1; }), weft::async([] { return std::string("x"); }),
                            weft::make_ready_future(2.5));
  auto [a, b, c] = all.get();
  EXPECT_EQ(a.get(), 1);
  EXPECT_EQ(b.get(), "x");
  EXPECT_DOUBLE_EQ(c.get(), 2.5);
}

TEST(Future, WhenAllRangeAndExceptions) {
  scoped_runtime rt({"--weft:threads=2"});
  std::vector<weft::future<int>> fs;
  for (int i = 0; i < 100; ++i)
    fs.push_back(weft::async([i]() -> int {
      if (i == 57) throw std::runtime_error("57");
      return i;
    }));
  auto done = weft::when_all(fs).get();
  ASSERT_EQ(done.size(), 100u);
  int sum = 0;
  for (int i = 0; i < 100; ++i) {
    if (i == 57) {
      EXPECT_THROW(done[i].get(), std::runtime_error);
    } else {
      sum += done[i].get();
    }
  }
  EXPECT_EQ(sum, 99 * 100 / 2 - 57);
  auto empty = weft::when_all(std::vector<weft::future<void>>{}).get();
  EXPECT_TRUE(empty.empty());
}

TEST(Future, WhenAllThenInsideTasks) {
  scoped_runtime rt({"--weft:threads=2"});
  auto outer = weft::async([] {
    std::vector<weft::future<long>> v;
    for (long i = 1; i <= 10; ++i) v.push_back(weft::async([i] { return i * i; }));
    return weft::when_all(v)
        .then([](auto f) {
          long s = 0;
          for (auto& x : f.get()) s += x.get();
          return s;
        })
        .get();
  });
  EXPECT_EQ(outer.get(), 385);
}

TEST(Promise, SetFromAnotherThreadWakesWaiters) {
  scoped_runtime rt({"--weft:threads=2"});
  weft::promise<int> p;
  weft::shared_future<int> sf = p.get_future().share();
  std::vector<weft::future<int>> waiting;
  for (int i = 0; i < 50; ++i) waiting.push_back(weft::async([sf, i] { return sf.get() + i; }));
  std::thread setter([&p] { p.set_value(100); });
  long sum = 0;
  for (auto& f : waiting) sum += f.get();
  setter.join();
  EXPECT_EQ(sum, 50 * 100 + 49 * 50 / 2);
}

TEST(Promise, BrokenPromiseAndDoubleSet) {
  scoped_runtime rt({"--weft:threads=1"});
  weft::future<int> f;
  {
    weft::promise<int> p;
    f = p.get_future();
  }
  EXPECT_THROW(f.get(), weft::future_error);
  weft::promise<void> q;
  q.set_value();
  EXPECT_THROW(q.set_value(), weft::future_error);
  auto qf = q.get_future();
  EXPECT_NO_THROW(qf.get());
  EXPECT_THROW(q.get_future(), weft::future_error);  // only once
}

TEST(Promise, SetException) {
  scoped_runtime rt({"--weft:threads=1"});
  weft::promise<std::string> p;
  auto f = p.get_future();
  p.set_exception(std::make_exception_ptr(std::invalid_argument("nope")));
  EXPECT_THROW(f.get(), std::invalid_argument);
}

TEST(Future, MakeExceptionalFuture) {
  scoped_runtime rt({"--weft:threads=1"});
  auto f = weft::make_exceptional_future<int>(std::make_exception_ptr(std::runtime_error("e")));
  EXPECT_TRUE(f.is_ready());
  EXPECT_THROW(f.get(), std::runtime_error);
}

TEST(Dataflow, RunsWhenAllInputsReadyAndChains) {
  scoped_runtime rt({"--weft:threads=2"});
  // A 1-D stencil of dataflow nodes, 50 steps wide 7: each node sums its
  // three (clipped) neighbours from the previous step.
  const int W = 7, T = 50;
  std::vector<weft::shared_future<long>> prev(W), cur(W);
  std::vector<long> ref(W, 1), nref(W);
  for (int x = 0; x < W; ++x) prev[x] = weft::make_ready_future(1L).share();
  for (int t = 0; t < T; ++t) {
    for (int x = 0; x < W; ++x) {
      std::vector<weft::shared_future<long>> in;
      long r = 0;
      for (int d = std::max(0, x - 1); d <= std::min(W - 1, x + 1); ++d) {
        in.push_back(prev[d]);
        r += ref[d];
      }
      nref[x] = r % 1000003;
      cur[x] = weft::dataflow(
                   [](std::vector<weft::shared_future<long>>& v) {
                     long s = 0;
                     for (auto& f : v) {
                       EXPECT_TRUE(f.is_ready());
                       s += f.get();
                     }
                     return s % 1000003;
                   },
                   std::move(in))
                   .share();
    }
    std::swap(prev, cur);
    std::swap(ref, nref);
  }
  for (int x = 0; x < W; ++x) EXPECT_EQ(prev[x].get(), ref[x]);
}

namespace {
struct counted {  // counts live copies (a node's captured state)
  static inline std::atomic<int> live{0};
  counted() { live.fetch_add(1); }
  counted(const counted&) { live.fetch_add(1); }
  ~counted() { live.fetch_sub(1); }
};
}  // namespace

TEST(Dataflow, NodeDropsItsInputsWhenItsWorkerIsIdle) {
  // A finished node drops its inputs once its worker has nothing else to do
  // (not before that worker's next task): here at once, nothing else runs.
  scoped_runtime rt({"--weft:threads=2"});
  std::weak_ptr<int> watch;
  std::vector<weft::shared_future<std::shared_ptr<int>>> in;
  {
    auto v = std::make_shared<int>(7);
    watch = v;
    in.push_back(weft::make_ready_future(std::move(v)).share());
  }
  auto out = weft::dataflow([](std::vector<weft::shared_future<std::shared_ptr<int>>>& v) { return *v[0].get(); },
                            std::move(in));
  EXPECT_EQ(out.get(), 7);
  for (int i = 0; i < 20000 && !watch.expired(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(watch.expired());
}

TEST(Dataflow, FinalizeWaitsForDeferredCleanups) {
  // Long chains on both workers: every node's cleanup is deferred; finalize
  // (quiescence) must not stop the workers before they ran, so every
  // captured object is gone once the runtime is.
  counted::live = 0;
  {
    scoped_runtime rt({"--weft:threads=2"});
    std::vector<weft::shared_future<int>> heads;
    for (int c = 0; c < 2; ++c) {
      weft::shared_future<int> f = weft::make_ready_future(0).share();
      for (int i = 0; i < 2000; ++i)
        f = weft::dataflow(weft::on_thread{c},
                           [keep = counted{}](std::vector<weft::shared_future<int>>& v) { return v[0].get() + 1; },
                           std::vector{f})
                .share();
      heads.push_back(f);
    }
    for (auto& h : heads) EXPECT_EQ(h.get(), 2000);
  }
  EXPECT_EQ(counted::live.load(), 0);
}

TEST(Dataflow, ManyInputsEmptyInputsAndExceptions) {
  scoped_runtime rt({"--weft:threads=2"});
  std::vector<weft::future<int>> many;
  for (int i = 0; i < 20; ++i) many.push_back(weft::async([i] { return i; }));
  auto sum = weft::dataflow(
      [](std::vector<weft::future<int>>& v) {
        int s = 0;
        for (auto& f : v) s += f.get();
        return s;
      },
      std::move(many));
  EXPECT_EQ(sum.get(), 190);
  auto none = weft::dataflow([](std::vector<weft::future<int>>& v) { return int(v.size()); }, std::vector<weft::future<int>>{});
  EXPECT_EQ(none.get(), 0);
  std::vector<weft::future<int>> bad;
  bad.push_back(weft::async([]() -> int { throw std::runtime_error("input failed"); }));
  auto propagated = weft::dataflow([](std::vector<weft::future<int>>& v) { return v[0].get(); }, std::move(bad));
  EXPECT_THROW(propagated.get(), std::runtime_error);
}
