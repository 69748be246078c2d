// Target tasks: kernels on every device of every rank, map clauses,
// dependencies, device_buffer chains, and errors reported to the future.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "expect_error.hpp"
#include "spmd_main.hpp"
#include "weft/offload.hpp"
#include "weft/this_task.hpp"

namespace {

using offload_test::expect_error;
using weft::test::on_every_rank;

void saxpy(float a, std::span<const float> x, std::span<float> y) {
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += a * x[i];
}

void fill_rank(std::span<int> out, int value) {
  for (auto& v : out) v = value * 1000 + weft::rank();
}

TEST(OffloadTarget, SaxpyOnEveryDevice) {
  on_every_rank([] {
    for (const weft::device& d : weft::devices()) {
      std::vector<float> x(257), y(257, 1.0f);
      std::iota(x.begin(), x.end(), 0.0f);
      weft::target(d, saxpy, 2.0f, weft::map_to(x), weft::map_tofrom(y)).get();
      for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], 1.0f + 2.0f * static_cast<float>(i));
    }
  });
}

TEST(OffloadTarget, KernelRunsOnTheDevicesRank) {
  on_every_rank([] {
    for (const weft::device& d : weft::devices()) {
      std::vector<int> out(3, -1);
      weft::target(d, fill_rank, weft::map_from(out), 7).get();
      for (int v : out) EXPECT_EQ(v, 7000 + d.rank());
    }
  });
}

TEST(OffloadTarget, StatelessLambdaKernelsAndManyInFlight) {
  on_every_rank([] {
    const auto all = weft::devices();
    std::vector<std::vector<long>> outs(64, std::vector<long>(4));
    std::vector<weft::future<void>> fs;
    for (std::size_t i = 0; i < outs.size(); ++i)
      fs.push_back(weft::target(
          all[i % all.size()], [](std::span<long> o, long k) { for (auto& v : o) v = k * k; },
          weft::map_from(outs[i]), static_cast<long>(i)));
    for (auto& f : fs) f.get();
    for (std::size_t i = 0; i < outs.size(); ++i) EXPECT_EQ(outs[i][3], static_cast<long>(i * i));
  });
}

TEST(OffloadTarget, ChainOnARemoteDeviceMovesNoHostData) {
  on_every_rank([] {
    const weft::device d = weft::devices_of((weft::rank() + 1) % weft::nranks()).back();
    auto buf = weft::allocate<long>(d, 16).get();
    auto init = [](std::span<long> b) { for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<long>(i); };
    auto step = [](std::span<long> b, long k) { for (auto& v : b) v = v * 2 + k; };
    weft::future<void> last = weft::target(d, init, buf);
    for (long k = 1; k <= 10; ++k) last = weft::target(d, step, buf, k, std::move(last));
    last.get();
    std::vector<long> host(16);
    weft::copy(std::span<long>(host), buf, 0).get();
    for (std::size_t i = 0; i < host.size(); ++i) {
      long v = static_cast<long>(i);
      for (long k = 1; k <= 10; ++k) v = v * 2 + k;
      EXPECT_EQ(host[i], v);
    }
    weft::deallocate(buf).get();
  });
}

TEST(OffloadTarget, ConsumerOnAnotherDeviceGetsTheOutputDeviceToDevice) {
  on_every_rank([] {
    const auto all = weft::devices();
    const weft::device a = all[static_cast<std::size_t>(weft::rank()) % all.size()];
    const weft::device b = all[(static_cast<std::size_t>(weft::rank()) + 1) % all.size()];
    auto out = weft::allocate<int>(a, 8).get();
    auto in = weft::allocate<int>(b, 8).get();
    auto produced = weft::target(a, [](std::span<int> o) { std::iota(o.begin(), o.end(), 40); }, out);
    auto moved = produced.then([out, in](weft::future<void> f) {
      f.get();
      weft::copy(in, 0, out, 0, 8).get();
    });
    std::vector<int> sums(1);
    weft::target(b, [](std::span<const int> i, std::span<int> s) { s[0] = std::accumulate(i.begin(), i.end(), 0); },
                 in, weft::map_from(sums), std::move(moved))
        .get();
    EXPECT_EQ(sums[0], 40 + 41 + 42 + 43 + 44 + 45 + 46 + 47);
    weft::deallocate(out).get();
    weft::deallocate(in).get();
  });
}

TEST(OffloadTarget, SharedFutureDependenciesOrderTasks) {
  on_every_rank([] {
    const weft::device d = weft::devices().back();
    auto buf = weft::allocate<int>(d, 1).get();
    weft::shared_future<void> first = weft::target(d, [](std::span<int> b) { b[0] = 5; }, buf).share();
    auto second = weft::target(d, [](std::span<int> b) { b[0] *= 3; }, buf, first);
    second.get();
    std::vector<int> host(1);
    weft::copy(std::span<int>(host), buf, 0).get();
    EXPECT_EQ(host[0], 15);
    weft::deallocate(buf).get();
  });
}

TEST(OffloadErrors, UnknownDevice) {
  on_every_rank([] {
    std::vector<int> x(4);
    expect_error<std::out_of_range>([&] { weft::target(weft::device_at(-3), fill_rank, weft::map_from(x), 1).get(); },
                                    "no device -3");
  });
}

TEST(OffloadErrors, ThrowingKernelNamesDeviceAndRank) {
  on_every_rank([] {
    const weft::device d = weft::devices().back();
    expect_error<std::exception>(
        [&] { weft::target(d, [](int k) { if (k > 0) throw std::runtime_error("bad input"); }, 1).get(); },
        "kernel failed on device " + std::to_string(d.id()) + " (cpu, rank " + std::to_string(d.rank()) +
            "): bad input");
    // The device keeps working.
    std::vector<int> out(1);
    weft::target(d, fill_rank, weft::map_from(out), 2).get();
    EXPECT_EQ(out[0], 2000 + d.rank());
  });
}

TEST(OffloadErrors, FailedDependencyFailsTheTask) {
  on_every_rank([] {
    const weft::device d = weft::devices().front();
    auto bad = weft::target(d, [] { throw std::runtime_error("first fails"); });
    std::vector<int> out(1, -1);
    expect_error<std::exception>([&] { weft::target(d, fill_rank, weft::map_from(out), 3, std::move(bad)).get(); },
                                 "first fails");
    EXPECT_EQ(out[0], -1);
  });
}

TEST(OffloadErrors, BufferOfNoDevice) {
  on_every_rank([] {
    weft::device_buffer<int> nowhere{999, 64, 4};
    expect_error<std::invalid_argument>(
        [&] { weft::target(weft::devices().front(), [](std::span<int>) {}, nowhere).get(); },
        "device_buffer of device 999, which does not exist");
  });
}

TEST(OffloadTarget, BuffersOfOtherDevicesArriveAsCopies) {
  on_every_rank([] {
    // Inputs on every device, summed by a kernel on the next rank's device:
    // each one is fetched by that device's rank from the input's rank.
    const auto all = weft::devices();
    std::vector<weft::device_buffer<int>> inputs;
    for (const weft::device& d : all) {
      auto b = weft::allocate<int>(d, 5).get();
      weft::target(d, [](std::span<int> o, int k) { for (auto& v : o) v = k; }, b, d.id() + 1).get();
      inputs.push_back(b);
    }
    const weft::device consumer = weft::devices_of((weft::rank() + 1) % weft::nranks()).front();
    std::vector<long> sums(2);
    weft::target(consumer,
                 [](std::vector<std::span<int>> in, std::span<const int> first, std::span<long> s) {
                   for (const auto& b : in) s[0] += std::accumulate(b.begin(), b.end(), 0L);
                   s[1] = first[0];
                 },
                 inputs, inputs.back(), weft::map_tofrom(sums))
        .get();
    const long n = static_cast<long>(all.size());
    EXPECT_EQ(sums[0], 5 * n * (n + 1) / 2);
    EXPECT_EQ(sums[1], n);
    for (auto& b : inputs) weft::deallocate(b).get();
  });
}

/// Where each rank's long kernel is (smp ranks share the process; on mpi
/// the kernel runs in the test's own process too: its device is local).
enum stage : int { idle, kernel_running, copy_landed };
std::array<std::atomic<int>, 64> stages{};

/// Says it runs, then waits (a minute at most) until the copy to `landing`
/// has landed and hands back what it sees there; nothing if it never did.
void wait_for_copy(std::size_t rank, std::span<const int> landing, std::span<int> seen) {
  stages[rank].store(kernel_running, std::memory_order_release);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (stages[rank].load(std::memory_order_acquire) != copy_landed) {
    if (std::chrono::steady_clock::now() > deadline) return;
    weft::this_task::yield();
  }
  std::copy(landing.begin(), landing.end(), seen.begin());
}

TEST(OffloadQueues, LongKernelDoesNotBlockTransfers) {
  on_every_rank([] {
    // Once the kernel runs, a host -> device copy to the same device must
    // land while it still runs, and the kernel must see its bytes. Were
    // copies queued behind kernels, the copy would wait for the kernel,
    // which gives up after a minute: the test fails instead of hanging.
    const weft::device d = weft::devices_of(weft::rank()).front();
    const auto me = static_cast<std::size_t>(weft::rank());
    stages[me] = idle;
    auto buf = weft::allocate<int>(d, 4).get();
    const std::vector<int> zeros(4, 0);
    weft::copy(buf, 0, std::span<const int>(zeros)).get();
    std::vector<int> seen(4, -1);
    auto waiting = weft::target(d, wait_for_copy, me, buf, weft::map_tofrom(seen));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (stages[me].load(std::memory_order_acquire) != kernel_running &&
           std::chrono::steady_clock::now() < deadline)
      weft::this_task::yield();
    ASSERT_EQ(stages[me].load(), kernel_running) << "the kernel did not start within a minute";
    const std::vector<int> data{1, 2, 3, 4};
    weft::copy(buf, 0, std::span<const int>(data)).get();  // the kernel is running now
    stages[me].store(copy_landed, std::memory_order_release);
    waiting.get();
    EXPECT_EQ(seen, data) << "the kernel did not see the copy land while it ran: copies wait behind kernels";
    weft::deallocate(buf).get();
  });
}

}  // namespace
