// Dependencies between target tasks resolved on the devices' ranks: a
// consumer launched while its producer runs on another rank waits there,
// gets the producer's output from the producer's rank, fails with the
// producer's error, and every record the ranks kept for this goes away.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "expect_error.hpp"
#include "gate.hpp"
#include "spmd_main.hpp"
#include "weft/coll.hpp"
#include "weft/offload.hpp"
#include "weft/this_task.hpp"

namespace {

using offload_test::expect_error;
using weft::test::on_every_rank;

// Producers wait at the calling rank's gate (gate.hpp), which each test
// opens only after launching the consumers: every consumer is certainly
// launched while its producer is in flight.

void gated_iota(std::span<int> out, int first, std::size_t gate) {
  offload_test::wait_at_gate(gate);
  std::iota(out.begin(), out.end(), first);
}

void gated_failure(std::span<int>, std::size_t gate) {
  offload_test::wait_at_gate(gate);
  throw std::runtime_error("the producer failed");
}

void sum_into(std::span<const int> a, std::span<const int> b, std::span<int> sum) {
  sum[0] = std::accumulate(a.begin(), a.end(), 0) + std::accumulate(b.begin(), b.end(), 0);
}

/// Sends this rank's consumer counts (they would otherwise wait for later
/// launches), then waits (bounded) until the calling rank holds no task
/// records. Every rank must have seen all its target tasks' futures ready
/// first: a consumer's reply can come back before its producer's, and the
/// producer's count is made when its own reply comes.
bool records_drain() {
  weft::detail::send_consumer_counts_now();
  weft::barrier();
  for (int i = 0; i < 20000; ++i) {
    if (weft::detail::task_records_here() == 0) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    weft::this_task::yield();
  }
  return false;
}

/// Devices of two other ranks than the caller's, when there are 3 ranks or
/// more (else of any two ranks).
std::pair<weft::device, weft::device> producer_and_consumer() {
  const auto all = weft::devices();
  const auto n = static_cast<std::size_t>(weft::nranks());
  const std::size_t per_rank = all.size() / n;
  const std::size_t p = (static_cast<std::size_t>(weft::rank()) + 1) % n, c = (p + 1) % n;
  return {all[p * per_rank], all[c * per_rank + per_rank - 1]};
}

TEST(OffloadDependencies, ConsumerWaitsOnItsDevicesRankAndFetchesFromTheProducers) {
  on_every_rank([] {
    const auto [pd, cd] = producer_and_consumer();
    const std::size_t gate = offload_test::my_gate();
    offload_test::close_gate(pd.rank(), gate);
    const std::uint64_t before = weft::detail::launches_with_device_dependencies();
    auto a = weft::allocate<int>(pd, 16).get();
    auto b = weft::allocate<int>(pd, 16).get();
    auto fa = weft::target(pd, gated_iota, a, 1, gate).share();
    auto fb = weft::target(pd, gated_iota, b, 100, gate).share();
    std::vector<int> sum(1, -1);
    auto summed = weft::target(cd, sum_into, a, b, weft::map_from(sum), fa, fb).share();
    // A chain on one device, each task launched while the one before runs;
    // it writes `a`, so it starts after the consumer that reads `a`.
    std::vector<weft::shared_future<void>> chain{summed};
    for (int k = 0; k < 5; ++k)
      chain.push_back(weft::target(pd, [](std::span<int> x) { for (auto& v : x) v += 1; }, a, chain.back()).share());
    const weft::shared_future<void> last = chain.back();
    std::vector<int> host(16);
    auto copied = weft::target(
        cd, [](std::span<const int> x, std::span<int> h) { std::copy(x.begin(), x.end(), h.begin()); }, a,
        weft::map_from(host), last);
    // Every launch above named a producer still in flight (at least these:
    // the count is the process's, which smp ranks share).
    EXPECT_GE(weft::detail::launches_with_device_dependencies() - before, 7u);
    offload_test::open_gate(pd.rank(), gate);
    summed.get();
    EXPECT_EQ(sum[0], (1 + 16) * 16 / 2 + (100 + 115) * 16 / 2) << "the consumer read a or b before its producers ended";
    copied.get();
    EXPECT_EQ(host.front(), 1 + 5);
    EXPECT_EQ(host.back(), 16 + 5);
    fb.get();
    for (const auto& f : chain) f.get();
    weft::deallocate(a).get();
    weft::deallocate(b).get();
    weft::barrier();
    EXPECT_TRUE(records_drain()) << weft::detail::task_records_here() << " records left on rank " << weft::rank();
  });
}

TEST(OffloadDependencies, ProducersErrorReachesConsumersOnOtherRanks) {
  on_every_rank([] {
    const auto [pd, cd] = producer_and_consumer();
    const std::size_t gate = offload_test::my_gate();
    offload_test::close_gate(pd.rank(), gate);
    const std::uint64_t before = weft::detail::launches_with_device_dependencies();
    auto a = weft::allocate<int>(pd, 4).get();
    auto bad = weft::target(pd, gated_failure, a, gate).share();
    std::vector<int> out(4, -1);
    auto consumer =
        weft::target(cd, [](std::span<const int> x, std::span<int> o) { o[0] = x[0]; }, a, weft::map_from(out), bad);
    // A consumer of the failed consumer fails too, and the devices go on.
    auto f = weft::target(cd, [](std::span<int>) {}, weft::map_alloc(out), bad).share();
    auto second = weft::target(pd, [] {}, f);
    EXPECT_GE(weft::detail::launches_with_device_dependencies() - before, 3u);
    offload_test::open_gate(pd.rank(), gate);
    expect_error<std::exception>([&] { consumer.get(); }, "the producer failed");
    EXPECT_EQ(out[0], -1);
    expect_error<std::exception>([&] { second.get(); }, "the producer failed");
    weft::target(cd, [](std::span<int> o) { o[0] = 7; }, weft::map_from(out)).get();
    EXPECT_EQ(out[0], 7);
    bad.wait();
    f.wait();
    weft::deallocate(a).get();
    weft::barrier();
    EXPECT_TRUE(records_drain()) << weft::detail::task_records_here() << " records left on rank " << weft::rank();
  });
}

TEST(OffloadDependencies, ManyConsumersOfOneProducerAcrossEveryDevice) {
  on_every_rank([] {
    const auto all = weft::devices();
    const weft::device pd = all[static_cast<std::size_t>(weft::rank()) % all.size()];
    const std::size_t gate = offload_test::my_gate();
    offload_test::close_gate(pd.rank(), gate);
    const std::uint64_t before = weft::detail::launches_with_device_dependencies();
    auto a = weft::allocate<int>(pd, 8).get();
    auto produced = weft::target(pd, gated_iota, a, 10, gate).share();
    std::vector<std::vector<int>> sums(all.size() * 3, std::vector<int>(1, -1));
    std::vector<weft::future<void>> done;
    for (std::size_t i = 0; i < sums.size(); ++i)
      done.push_back(weft::target(all[i % all.size()],
                                  [](std::span<const int> x, std::span<int> s) { s[0] = std::accumulate(x.begin(), x.end(), 0); },
                                  a, weft::map_from(sums[i]), produced));
    EXPECT_GE(weft::detail::launches_with_device_dependencies() - before, sums.size());
    offload_test::open_gate(pd.rank(), gate);
    for (auto& f : done) f.get();
    produced.get();
    for (const auto& s : sums) EXPECT_EQ(s[0], (10 + 17) * 8 / 2);
    weft::deallocate(a).get();
    weft::barrier();
    EXPECT_TRUE(records_drain()) << weft::detail::task_records_here() << " records left on rank " << weft::rank();
  });
}

TEST(OffloadDependencies, HostBytesCopiedInAreReadAfterTheProducers) {
  on_every_rank([] {
    // The producer copies its result back into x; the consumer copies x in.
    // Its launch carries x's bytes, so it may not leave before the producer
    // has ended and written them.
    const auto [pd, cd] = producer_and_consumer();
    const std::size_t gate = offload_test::my_gate();
    offload_test::close_gate(pd.rank(), gate);
    std::vector<int> x(8, 0), y(8, -1);
    auto produced = weft::target(pd, gated_iota, weft::map_from(x), 1, gate);
    auto consumed = weft::target(
        cd, [](std::span<const int> in, std::span<int> out) { std::copy(in.begin(), in.end(), out.begin()); },
        weft::map_to(x), weft::map_from(y), std::move(produced));
    offload_test::open_gate(pd.rank(), gate);
    consumed.get();
    EXPECT_EQ(y, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8})) << "the consumer was sent x before the producer wrote it";
    weft::barrier();
    EXPECT_TRUE(records_drain()) << weft::detail::task_records_here() << " records left on rank " << weft::rank();
  });
}

}  // namespace
