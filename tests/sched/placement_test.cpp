// weft::on_thread: placed tasks run on the worker they ask for while that
// worker is free, and an idle sibling still takes them from a busy one.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "test_runtime.hpp"

using weft::test::scoped_runtime;

namespace {

/// Spins until `n` reaches `target` without going back to the scheduler, so
/// the calling worker takes no task meanwhile.
void spin_until(const std::atomic<int>& n, int target) {
  while (n.load(std::memory_order_acquire) < target) std::this_thread::yield();
}

/// With two workers: holds the other worker `b` busy, lets `queue(b, log)`
/// queue work from this one, then releases `b` and spins until `n` tasks
/// logged themselves. Only `b` runs tasks meanwhile, and it looks at work
/// placed on it before it steals from this worker's deque (oldest first):
/// the log shows which it found where.
template <class Queue>
std::vector<int> run_on_other_worker(int n, Queue queue) {
  std::vector<int> log;
  weft::async([&] {
    const int b = 1 - weft::thread_index();
    std::atomic<int> held{0};
    std::atomic<bool> go{false};
    auto hold = weft::async([&] {
      held.store(1, std::memory_order_release);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    });
    spin_until(held, 1);  // b stole the holder: this worker spins, never runs it
    std::atomic<int> done{0};
    auto record = [&log, &done](int id) {
      log.push_back(id);  // only b runs tasks: no race
      done.fetch_add(1, std::memory_order_release);
    };
    queue(b, record);
    go.store(true, std::memory_order_release);
    spin_until(done, n);
    hold.get();
  }).get();
  return log;
}

}  // namespace

TEST(Placement, AsyncRunsOnTheWorkerAskedFor) {
  scoped_runtime rt({"--weft:threads=2"});
  std::vector<weft::future<void>> fs;
  auto log = run_on_other_worker(2, [&](int b, auto record) {
    fs.push_back(weft::async([=] { record(1); }));  // this worker's deque
    fs.push_back(weft::async(weft::on_thread{b}, [=] {
      EXPECT_EQ(weft::thread_index(), b);
      record(2);
    }));
  });
  for (auto& f : fs) f.get();
  // Ignoring the hint would queue both here; b would steal 1 first.
  EXPECT_EQ(log, (std::vector<int>{2, 1}));
}

TEST(Placement, HintIsTakenModuloTheWorkerCount) {
  scoped_runtime rt({"--weft:threads=2"});
  std::vector<weft::future<void>> fs;
  auto log = run_on_other_worker(3, [&](int b, auto record) {
    fs.push_back(weft::async([=] { record(1); }));
    fs.push_back(weft::async(weft::on_thread{b + 2}, [=] { record(2); }));
    fs.push_back(weft::async(weft::on_thread{b - 4}, [=] { record(3); }));
  });
  for (auto& f : fs) f.get();
  EXPECT_EQ(log, (std::vector<int>{2, 3, 1}));  // placed work is taken oldest first
}

TEST(Placement, DataflowRunsOnTheWorkerAskedFor) {
  scoped_runtime rt({"--weft:threads=2"});
  using input = std::vector<weft::shared_future<int>>;
  std::vector<weft::future<int>> fs;
  weft::future<void> plain;
  auto log = run_on_other_worker(3, [&](int b, auto record) {
    plain = weft::async([=] { record(1); });
    // Ready when created: handed over to b at once.
    fs.push_back(weft::dataflow(weft::on_thread{b}, [=](input& v) {
      record(2);
      return v[0].get();
    }, input{weft::make_ready_future(7).share()}));
    // Ready when this worker sets the promise: handed over then.
    weft::promise<int> p;
    fs.push_back(weft::dataflow(weft::on_thread{b}, [=](input& v) {
      record(3);
      return v[0].get() * v[1].get();
    }, input{p.get_future().share(), weft::make_ready_future(2).share()}));
    p.set_value(21);
  });
  plain.get();
  EXPECT_EQ(fs[0].get(), 7);
  EXPECT_EQ(fs[1].get(), 42);
  EXPECT_EQ(log, (std::vector<int>{2, 3, 1}));
}

TEST(Placement, IdleWorkerTakesPlacedWorkFromABusyOne) {
  scoped_runtime rt({"--weft:threads=2"});
  weft::async([] {
    const int self = weft::thread_index();
    const int other = 1 - self;
    std::atomic<int> started{0};
    std::atomic<bool> release{false};
    // Occupy the other worker until a task placed on it runs: only this
    // worker, idle while it waits in get(), can run that task. Without
    // stealing placed work this never finishes (the test times out).
    auto blocker = weft::async(weft::on_thread{other}, [&] {
      started.store(1, std::memory_order_release);
      while (!release.load(std::memory_order_acquire)) {
      }
    });
    spin_until(started, 1);
    auto placed = weft::async(weft::on_thread{other}, [&] {
      release.store(true, std::memory_order_release);
      return weft::thread_index();
    });
    EXPECT_EQ(placed.get(), self);
    blocker.get();
  }).get();
}

TEST(Placement, OffTheWorkersTheHintIsIgnored) {
  scoped_runtime rt({"--weft:threads=2"});
  // Called from the main thread (not a worker): still runs, somewhere.
  auto f = weft::async(weft::on_thread{1}, [](int x) { return x + 1; }, 41);
  EXPECT_EQ(f.get(), 42);
  auto d = weft::dataflow(weft::on_thread{0}, [](std::vector<weft::future<int>>& v) { return v[0].get() * 2; },
                          [] {
                            std::vector<weft::future<int>> v;
                            v.push_back(weft::make_ready_future(4));
                            return v;
                          }());
  EXPECT_EQ(d.get(), 8);
}

TEST(Placement, OneWorkerRunsEverything) {
  scoped_runtime rt({"--weft:threads=1"});
  std::atomic<int> sum{0};
  weft::async([&] {
    std::vector<weft::future<void>> fs;
    for (int i = 0; i < 50; ++i) fs.push_back(weft::async(weft::on_thread{i}, [&, i] { sum += i; }));
    for (auto& f : fs) f.get();
  }).get();
  EXPECT_EQ(sum.load(), 49 * 50 / 2);
}

TEST(Placement, ConcurrentPlacersAndTakersRunEveryTaskOnce) {
  // Four workers place tasks on each other at once while idle siblings
  // take whole placed lists: every task runs exactly once.
  scoped_runtime rt({"--weft:threads=4"});
  constexpr int placers = 8, per_placer = 4000;
  std::vector<std::atomic<int>> runs(placers * per_placer);
  std::vector<weft::future<void>> outer;
  for (int p = 0; p < placers; ++p)
    outer.push_back(weft::async([&runs, p] {
      std::vector<weft::future<void>> fs;
      fs.reserve(per_placer);
      for (int i = 0; i < per_placer; ++i) {
        const int id = p * per_placer + i;
        fs.push_back(weft::async(weft::on_thread{i + p}, [&runs, id] { runs[id].fetch_add(1); }));
      }
      for (auto& f : fs) f.get();
    }));
  for (auto& f : outer) f.get();
  for (int id = 0; id < placers * per_placer; ++id) ASSERT_EQ(runs[id].load(), 1) << "task " << id;
}

TEST(Placement, PlacedDataflowWaitsForAnotherPlacedNode) {
  // A placed node whose function waits for a second node placed on the
  // same worker, which becomes ready only while the first waits: the first
  // suspends and its worker must queue and run the second. (Nodes that a
  // node's result makes ready are held back while it publishes that result,
  // but not while its function runs; holding them across the wait hung
  // here.)
  scoped_runtime rt({"--weft:threads=1"});
  using input = std::vector<weft::shared_future<int>>;
  const int got = weft::async([] {
    weft::promise<int> gate;
    weft::shared_future<int> second =
        weft::dataflow(weft::on_thread{0}, [](input& v) { return v[0].get() + 1; }, input{gate.get_future().share()})
            .share();
    auto first = weft::dataflow(weft::on_thread{0}, [&gate, second](input& v) {
      auto opener = weft::async([&gate] { gate.set_value(41); });  // runs while this node waits
      const int r = second.get() + v[0].get();
      opener.get();
      return r;
    }, input{weft::make_ready_future(0).share()});
    return first.get();
  }).get();
  EXPECT_EQ(got, 42);
}
