#include <gtest/gtest.h>
#include <algorithm>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "spmd_main.hpp"

using weft::test::on_every_rank;

namespace {

int whoami() { return weft::rank(); }
long add(long a, long b) { return a + b; }

struct particle {
  int id = 0;
  std::array<double, 3> pos{};
  std::string tag;
  template <class Ar>
  void serialize(Ar& ar) {
    ar & id & pos & tag;
  }
  bool operator==(const particle&) const = default;
};

std::atomic<long> posted_hits[64];

}  // namespace

TEST(RemoteCall, IdentityAndEveryRank) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    EXPECT_GE(me, 0);
    EXPECT_LT(me, n);
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(weft::async_at(r, whoami).get(), r);
      EXPECT_EQ(weft::async_at(r, [](int from) { return from * 1000 + weft::rank(); }, me).get(), me * 1000 + r);
    }
    EXPECT_EQ(weft::async_at(me, add, 40L, 2L).get(), 42);  // to self
  });
}

TEST(RemoteCall, ArgumentAndResultTypes) {
  on_every_rank([] {
    const int peer = (weft::rank() + 1) % weft::nranks();
    using nested = std::vector<std::pair<std::string, std::optional<std::array<int, 3>>>>;
    nested v = {{"a", std::array<int, 3>{1, 2, 3}}, {"b", std::nullopt}};
    auto echo = weft::async_at(peer, [](nested x) { return x; }, v).get();
    EXPECT_EQ(echo, v);
    auto t = weft::async_at(peer, [](std::tuple<int, double, std::string> x) {
                 return std::make_tuple(std::get<0>(x) + 1, std::get<1>(x) * 2, std::get<2>(x) + "!");
               },
               std::make_tuple(1, 1.5, std::string("hi")))
                 .get();
    EXPECT_EQ(t, std::make_tuple(2, 3.0, std::string("hi!")));
    particle p{7, {1, 2, 3}, "proton"};
    auto q = weft::async_at(peer, [](particle x) {
               x.id += 1;
               return x;
             },
             p)
                 .get();
    EXPECT_EQ(q.id, 8);
    EXPECT_EQ(q.tag, "proton");
    std::map<std::string, int> m = {{"x", 1}, {"y", 2}};
    EXPECT_EQ(weft::async_at(peer, [](std::map<std::string, int> x) { return x.size(); }, m).get(), 2u);
    weft::async_at(peer, [](int) {}, 5).get();  // void result
  });
}

TEST(RemoteCall, ExceptionsComeBackAsRemoteError) {
  on_every_rank([] {
    const int peer = (weft::rank() + 1) % weft::nranks();
    auto f = weft::async_at(peer, [](int x) -> int {
      if (x > 0) throw std::invalid_argument("bad x on the callee");
      return 0;
    },
                            3);
    try {
      f.get();
      FAIL() << "expected remote_error";
    } catch (const weft::remote_error& e) {
      EXPECT_STREQ(e.what(), "bad x on the callee");
      EXPECT_NE(e.remote_type().find("invalid_argument"), std::string::npos);
    }
  });
}

TEST(RemoteCall, BadRankThrows) {
  on_every_rank([] {
    EXPECT_THROW(weft::async_at(weft::nranks(), whoami), std::out_of_range);
    EXPECT_THROW(weft::async_at(-1, whoami), std::out_of_range);
  });
}

TEST(RemoteCall, NestedCallsBack) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    const int peer = (me + 1) % n;
    // peer calls back into us, which calls peer again: a chain of depth 3.
    long v = weft::async_at(peer, [](int origin) {
               return weft::async_at(origin, [](int back) {
                        return weft::async_at(back, [] { return 100L + weft::rank(); }).get() + 10;
                      },
                      weft::rank())
                          .get() +
                      1;
             },
             me)
                 .get();
    EXPECT_EQ(v, 100 + peer + 10 + 1);
  });
}

TEST(RemoteCall, PostAtRunsEverythingBeforeFinalize) {
  for (auto& h : posted_hits) h = 0;
  constexpr int per_pair = 500;
  on_every_rank([] {
    for (int r = 0; r < weft::nranks(); ++r)
      for (int i = 0; i < per_pair; ++i) weft::post_at(r, [] { posted_hits[weft::rank()]++; });
    // Wait until our own share arrived (every rank posts per_pair to us).
    while (posted_hits[weft::rank()].load() < long(per_pair) * weft::nranks()) weft::this_task::yield();
    EXPECT_EQ(posted_hits[weft::rank()].load(), long(per_pair) * weft::nranks());
  });
}

TEST(RemoteCall, LargePayloads64MiB) {
  on_every_rank([] {
    const int peer = (weft::rank() + 1) % weft::nranks();
    std::vector<std::uint8_t> big(64u << 20);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 131 + weft::rank());
    const std::uint64_t expect = std::accumulate(big.begin(), big.end(), std::uint64_t{0});
    auto sum = weft::async_at(peer, [](std::vector<std::uint8_t> v) {
      return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
    },
                              big);
    EXPECT_EQ(sum.get(), expect);
    auto back = weft::async_at(peer, [](std::size_t n) { return std::vector<std::uint8_t>(n, 7); }, big.size()).get();
    ASSERT_EQ(back.size(), big.size());
    EXPECT_EQ(std::accumulate(back.begin(), back.end(), std::uint64_t{0}), 7ull * big.size());
  });
}

// Many short strings stay in a call's body (no bulk segment each): bodies
// on both sides of 64 KiB, where the mpi wire frame switches from its
// 2-byte body length to an 8-byte one, arrive intact both ways.
TEST(RemoteCall, BodiesAroundTheLongFrameLimit) {
  on_every_rank([] {
    const int peer = (weft::rank() + 1) % weft::nranks();
    auto strings = [](std::size_t n, int salt) {
      std::vector<std::string> v(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = std::to_string(i * 7 + static_cast<std::size_t>(salt)) + "abc";
      return v;
    };
    std::vector<weft::future<std::vector<std::string>>> backs;
    std::vector<std::vector<std::string>> sent;
    // ~12-18 body bytes a string: 3200..4600 strings cross 64 KiB in small steps.
    for (std::size_t n = 3200; n <= 4600; n += 37) {
      sent.push_back(strings(n, weft::rank()));
      backs.push_back(weft::async_at(peer, [](std::vector<std::string> v) {
        std::reverse(v.begin(), v.end());
        return v;
      },
                                     sent.back()));
    }
    sent.push_back(strings(70000, weft::rank()));  // about 1 MiB of body
    backs.push_back(weft::async_at(peer, [](std::vector<std::string> v) { return v; }, sent.back()));
    for (std::size_t i = 0; i < backs.size(); ++i) {
      std::vector<std::string> got = backs[i].get();
      if (i + 1 < backs.size()) std::reverse(got.begin(), got.end());
      EXPECT_EQ(got, sent[i]) << "call " << i;
    }
  });
}

// Calls and results whose bodies lie on both sides of 255 bytes, where the
// mpi wire frame switches from its 4-byte compact prefix to the full one,
// all in flight at once so both kinds share MPI messages: every one
// arrives intact, in both directions.
TEST(RemoteCall, BodiesAroundTheCompactFrameLimit) {
  on_every_rank([] {
    const int peer = (weft::rank() + 1) % weft::nranks();
    std::vector<std::string> sent;
    std::vector<weft::future<std::string>> backs;
    for (std::size_t len = 200; len <= 320; ++len) {
      std::string s(len, 'a');
      for (std::size_t i = 0; i < len; ++i) s[i] = static_cast<char>('a' + (i * 7 + len + static_cast<std::size_t>(weft::rank())) % 26);
      sent.push_back(s);
      backs.push_back(weft::async_at(peer, [](std::string v) { return std::string(v.rbegin(), v.rend()); }, std::move(s)));
    }
    for (std::size_t i = 0; i < backs.size(); ++i)
      EXPECT_EQ(backs[i].get(), std::string(sent[i].rbegin(), sent[i].rend())) << "length " << sent[i].size();
  });
}

// A body longer than an eager message (the mpi backend sends it apart,
// ahead of the big segments, on the same tag) together with big segments:
// body and segments arrive whole and in their places, both ways, while
// small calls keep arriving between them.
TEST(RemoteCall, LongBodyWithLargeSegments) {
  on_every_rank([] {
    const int peer = (weft::rank() + 1) % weft::nranks();
    std::vector<std::string> names(30000);
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = "n" + std::to_string(i * 3 + 1);
    std::vector<double> values(1u << 18);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) * 0.5 + weft::rank();
    using parcel = std::tuple<std::vector<double>, std::vector<std::string>, std::vector<double>>;
    std::vector<weft::future<parcel>> backs;
    std::vector<weft::future<int>> smalls;
    for (int k = 0; k < 4; ++k) {
      backs.push_back(weft::async_at(peer, [](parcel p) {
        std::get<1>(p).push_back("seen");
        for (double& v : std::get<2>(p)) v += 1;
        return p;
      },
                                     parcel{values, names, values}));
      smalls.push_back(weft::async_at(peer, [](int x) { return x * 2; }, k));
    }
    for (int k = 0; k < 4; ++k) {
      parcel got = backs[static_cast<std::size_t>(k)].get();
      EXPECT_EQ(std::get<0>(got), values);
      ASSERT_EQ(std::get<1>(got).size(), names.size() + 1);
      EXPECT_TRUE(std::equal(names.begin(), names.end(), std::get<1>(got).begin()));
      EXPECT_EQ(std::get<1>(got).back(), "seen");
      ASSERT_EQ(std::get<2>(got).size(), values.size());
      for (std::size_t i = 0; i < values.size(); i += 997) EXPECT_EQ(std::get<2>(got)[i], values[i] + 1);
      EXPECT_EQ(smalls[static_cast<std::size_t>(k)].get(), 2 * k);
    }
  });
}

// Medium payloads (a few KiB to a few hundred KiB) travel copied through
// the mpi transport's pooled buffers and reach handlers as views into them;
// hundreds in flight at once hold more buffers than the pool keeps.
TEST(RemoteCall, MediumPayloadsManyInFlight) {
  on_every_rank([] {
    constexpr std::size_t sizes[] = {3u << 10, 20u << 10, 100u << 10, 300u << 10};
    auto fill = [](int from, int i, std::size_t bytes) {
      std::vector<std::uint32_t> v(bytes / 4);
      for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<std::uint32_t>(from * 1000003 + i * 7919 + k);
      return v;
    };
    std::vector<weft::future<std::uint64_t>> sums;
    std::vector<std::uint64_t> expect;
    for (int i = 0; i < 256; ++i) {
      const int dest = i % weft::nranks();
      auto v = fill(weft::rank(), i, sizes[i % 4]);
      expect.push_back(std::accumulate(v.begin(), v.end(), std::uint64_t{0}) + v.size());
      sums.push_back(weft::async_at(dest, [](std::vector<std::uint32_t> in) {
        return std::accumulate(in.begin(), in.end(), std::uint64_t{0}) + in.size();
      },
                                    std::move(v)));
    }
    for (std::size_t i = 0; i < sums.size(); ++i) EXPECT_EQ(sums[i].get(), expect[i]) << "call " << i;
    // And back: results of every size, many outstanding.
    std::vector<weft::future<std::vector<std::uint32_t>>> backs;
    for (int i = 0; i < 128; ++i) {
      const int dest = (weft::rank() + 1 + i) % weft::nranks();
      backs.push_back(weft::async_at(dest, [](int from, int k, std::size_t bytes) {
        std::vector<std::uint32_t> v(bytes / 4);
        for (std::size_t j = 0; j < v.size(); ++j) v[j] = static_cast<std::uint32_t>(from * 1000003 + k * 7919 + j);
        return v;
      },
                                     weft::rank(), i, sizes[i % 4]));
    }
    for (int i = 0; i < 128; ++i) EXPECT_EQ(backs[static_cast<std::size_t>(i)].get(), fill(weft::rank(), i, sizes[i % 4]));
  });
}

namespace {
struct tally {
  std::atomic<long> count[64];
  std::atomic<std::uint64_t> checksum[64];
};
tally received[64];  // [receiver rank] (per process: only our own rank's slot is used under mpi)
}  // namespace

TEST(RemoteCall, MillionMessagesIntegrity) {
  for (auto& t : received)
    for (int i = 0; i < 64; ++i) t.count[i] = 0, t.checksum[i] = 0;
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    const long per_rank = 1000000 / n;  // 10^6 messages in total
    const long per_dest = per_rank / n;
    // Two sender tasks per rank, interleaving destinations.
    auto sender = [me, n, per_dest](int part) {
      for (long i = part; i < per_dest; i += 2)
        for (int d = 0; d < n; ++d) {
          std::uint64_t payload = (std::uint64_t(me) << 40) ^ (std::uint64_t(d) << 32) ^ std::uint64_t(i);
          weft::post_at(d, [](int from, std::uint64_t v) {
            // The sum first: the check below reads it once the count is
            // complete, maybe while another worker is still in here.
            received[weft::rank()].checksum[from] += v * 2654435761u;
            received[weft::rank()].count[from]++;
          },
                        me, payload);
        }
    };
    auto a = weft::async(sender, 0);
    auto b = weft::async(sender, 1);
    a.get();
    b.get();
    // Our expected receipts from every source.
    for (int s = 0; s < n; ++s) {
      std::uint64_t want = 0;
      for (long i = 0; i < per_dest; ++i)
        want += ((std::uint64_t(s) << 40) ^ (std::uint64_t(me) << 32) ^ std::uint64_t(i)) * 2654435761u;
      while (received[me].count[s].load() < per_dest) weft::this_task::yield();
      EXPECT_EQ(received[me].count[s].load(), per_dest) << "from rank " << s;
      EXPECT_EQ(received[me].checksum[s].load(), want) << "from rank " << s;
    }
    weft::barrier();
    // Nothing more may arrive (no duplicates).
    for (int s = 0; s < n; ++s) EXPECT_EQ(received[me].count[s].load(), per_dest);
  });
}
