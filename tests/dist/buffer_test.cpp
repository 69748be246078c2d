// weft::buffer in remote calls on every backend: contents, alignment, the
// received memory staying valid while buffers hold it (the mpi transport's
// receive blocks must not be reused under them), and echoing back.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "spmd_main.hpp"

using weft::test::on_every_rank;

namespace {

// Element k of the payload that rank `from` sends as its call number i.
double value(int from, int i, std::size_t k) { return from * 1e6 + i * 1e3 + static_cast<double>(k % 997); }

weft::buffer<double> payload(int from, int i, std::size_t n) {
  return weft::buffer<double>::make(n, [&](std::span<double> out) {
    for (std::size_t k = 0; k < n; ++k) out[k] = value(from, i, k);
  });
}

bool holds(const weft::buffer<double>& b, int from, int i, std::size_t n) {
  if (b.size() != n) return false;
  for (std::size_t k = 0; k < n; ++k)
    if (b[k] != value(from, i, k)) return false;
  return true;
}

bool aligned(const weft::buffer<double>& b) {
  return b.empty() || reinterpret_cast<std::uintptr_t>(b.data()) % alignof(double) == 0;
}

// Received buffers kept by the destination rank until the test looks at
// them (per process; under mpi only this rank's entries are used).
std::vector<std::pair<int, weft::buffer<double>>> kept[64];
std::mutex kept_mutex;

// Sizes around every path: inline (below 4 KiB), bulk copied with the frame
// (under the eager limit), bulk on its own (above it), and a body of odd
// length before a bulk segment (the segment's alignment in the frame).
constexpr std::size_t sizes[] = {0, 3, 400, 700, 1500, 2100, 9000, 40000};

}  // namespace

TEST(Buffer, ArgumentsAndResultsEveryPath) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    int i = 0;
    for (std::size_t s : sizes)
      for (int dest = 0; dest < n; ++dest, ++i) {
        auto sum = weft::async_at(dest, [](std::string odd, weft::buffer<double> b, int from, int k) {
          if (!aligned(b) || !holds(b, from, k, b.size())) return -1.0;
          return std::accumulate(b.begin(), b.end(), 0.0) + static_cast<double>(odd.size());
        },
                                  std::string(static_cast<std::size_t>(i % 7) + 1, 'x'), payload(me, i, s), me, i);
        const auto expect = payload(me, i, s);
        EXPECT_EQ(sum.get(), std::accumulate(expect.begin(), expect.end(), 0.0) + static_cast<double>(i % 7 + 1))
            << "size " << s << " to rank " << dest;
        // And back as a result.
        auto back = weft::async_at(dest, [](int from, int k, std::size_t len) { return payload(from, k, len); }, me, i, s)
                        .get();
        EXPECT_TRUE(aligned(back));
        EXPECT_TRUE(holds(back, me, i, s)) << "result of size " << s << " from rank " << dest;
      }
  });
}

TEST(Buffer, ReceivedBuffersStayValidUnderLaterTraffic) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    // Every rank parks 200 buffers on its successor (more than the mpi
    // transport's pool of receive blocks), then floods it with more
    // traffic of every size, then has the successor check what it parked.
    const int succ = (me + 1) % n;
    std::vector<weft::future<void>> parked;
    for (int i = 0; i < 200; ++i)
      parked.push_back(weft::async_at(succ, [](int k, weft::buffer<double> b) {
        std::lock_guard lock(kept_mutex);
        kept[weft::rank()].emplace_back(k, std::move(b));
      },
                                      i, payload(me, i, sizes[i % 8])));
    for (auto& f : parked) f.get();
    std::vector<weft::future<double>> flood;
    for (int i = 0; i < 300; ++i)
      flood.push_back(weft::async_at(succ, [](weft::buffer<double> b) { return b.empty() ? 0.0 : b[b.size() - 1]; },
                                     payload(me, 1000 + i, sizes[i % 8])));
    for (auto& f : flood) f.get();
    weft::barrier();
    // Check on this rank what the predecessor parked here.
    const int pred = (me + n - 1) % n;
    std::lock_guard lock(kept_mutex);
    auto& mine = kept[me];  // smp: the ranks share `kept`, each uses its own slot
    EXPECT_EQ(mine.size(), 200u);
    for (auto& [i, b] : mine)
      EXPECT_TRUE(holds(b, pred, i, sizes[i % 8])) << "parked buffer " << i << " from rank " << pred;
    mine.clear();
  });
}

TEST(Buffer, EchoTheReceivedBuffer) {
  on_every_rank([] {
    const int me = weft::rank(), peer = (me + 1) % weft::nranks();
    for (std::size_t s : sizes) {
      auto b = payload(me, 7, s);
      for (int hop = 0; hop < 4; ++hop) b = weft::async_at(peer, [](weft::buffer<double> x) { return x; }, b).get();
      EXPECT_TRUE(holds(b, me, 7, s)) << "size " << s;
    }
  });
}
