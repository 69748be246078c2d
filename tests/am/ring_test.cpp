// The smp backend's building blocks on their own: the message ring (both
// ways to produce) and the channel that sends payload blocks back to the
// thread that allocated them.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "am/message.hpp"
#include "am/smp/pair_ring.hpp"

using weft::detail::am_message;
using weft::detail::am_return_channel;
using weft::detail::pair_ring;
namespace ser = weft::serialization;

namespace {

// A small message carrying (producer, sequence) inline.
am_message small(std::uint32_t producer, std::uint64_t seq) {
  am_message m;
  const std::uint64_t h[2] = {producer, seq};
  m.set_header(h, sizeof h);
  return m;
}
std::pair<std::uint64_t, std::uint64_t> fields(const am_message& m) {
  std::uint64_t h[2];
  std::memcpy(h, m.header_bytes().data(), sizeof h);
  return {h[0], h[1]};
}

// Counts payloads still alive: a message's bulk segment is kept by an
// owner that decrements on release.
std::atomic<int> alive{0};
void release_payload(void* p) noexcept {
  delete static_cast<std::vector<std::byte>*>(p);
  alive.fetch_sub(1);
}
am_message with_payload(std::size_t n) {
  auto* data = new std::vector<std::byte>(n, std::byte{7});
  alive.fetch_add(1);
  ser::message body;
  body.bulk.emplace_back(data->data(), data->size());
  am_message m;
  m.set_body(std::move(body), ser::owner::borrow(data, &release_payload));
  return m;
}

}  // namespace

TEST(PairRing, SingleProducerKeepsOrderAndReportsFull) {
  pair_ring r(8);
  for (std::uint64_t i = 0; i < 8; ++i) {
    am_message m = small(0, i);
    ASSERT_TRUE(r.try_write_single(m));
  }
  r.publish();
  am_message extra = small(0, 99);
  EXPECT_FALSE(r.try_write_single(extra));
  EXPECT_EQ(fields(extra).second, 99u);  // left untouched when full
  std::vector<std::uint64_t> got;
  EXPECT_EQ(r.drain(3, [&](am_message&& m) { got.push_back(fields(m).second); }), 3u);
  for (std::uint64_t i = 8; i < 11; ++i) {
    am_message m = small(0, i);
    ASSERT_TRUE(r.try_write_single(m));  // the freed slots, next lap
  }
  r.publish();
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.drain(100, [&](am_message&& m) { got.push_back(fields(m).second); }), 8u);
  EXPECT_FALSE(r.ready());
  ASSERT_EQ(got.size(), 11u);
  for (std::uint64_t i = 0; i < 11; ++i) EXPECT_EQ(got[i], i);
}

TEST(PairRing, WrittenMessagesStayInvisibleUntilPublished) {
  pair_ring r(8);
  std::vector<std::uint64_t> got;
  auto take = [&](am_message&& m) { got.push_back(fields(m).second); };
  for (std::uint64_t i = 0; i < 3; ++i) {
    am_message m = small(0, i);
    ASSERT_TRUE(r.try_write_single(m));
  }
  EXPECT_EQ(r.unpublished(), 3u);
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(r.drain(100, take), 0u);
  r.publish();
  EXPECT_EQ(r.unpublished(), 0u);
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.drain(100, take), 3u);
  // Published in the middle of a lap, then the rest of it and past its end.
  for (std::uint64_t i = 3; i < 11; ++i) {
    am_message m = small(0, i);
    ASSERT_TRUE(r.try_write_single(m));
    if (i == 5) r.publish();
  }
  EXPECT_EQ(r.unpublished(), 5u);
  EXPECT_EQ(r.drain(100, take), 3u);  // 3, 4, 5 only
  r.publish();
  EXPECT_EQ(r.drain(100, take), 5u);
  ASSERT_EQ(got.size(), 11u);
  for (std::uint64_t i = 0; i < 11; ++i) EXPECT_EQ(got[i], i);
}

TEST(PairRing, ConsumerTakesUnpublishedMessagesOfASingleWriterRing) {
  pair_ring r(8, /*single_writer=*/true);
  std::vector<std::uint64_t> got;
  auto take = [&](am_message&& m) { got.push_back(fields(m).second); };
  EXPECT_FALSE(r.holds_unpublished());
  for (std::uint64_t i = 0; i < 3; ++i) {
    am_message m = small(0, i);
    ASSERT_TRUE(r.try_write_single(m));
  }
  EXPECT_TRUE(r.holds_unpublished());
  EXPECT_EQ(r.drain(100, take), 0u);                   // the common path waits for publish
  EXPECT_EQ(r.drain(100, take, /*unpublished=*/true), 3u);
  EXPECT_FALSE(r.holds_unpublished());
  // The producer never published those, and writes more than a lap past
  // them before it does: publishing must not mark the reused slots with
  // the taken tickets' sequence numbers.
  for (std::uint64_t i = 3; i < 11; ++i) {
    am_message m = small(0, i);
    ASSERT_TRUE(r.try_write_single(m));
  }
  r.publish();
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.drain(100, take), 8u);
  // Published after being taken: nothing is delivered twice.
  am_message m = small(0, 11);
  ASSERT_TRUE(r.try_write_single(m));
  EXPECT_EQ(r.drain(100, take, true), 1u);
  r.publish();
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(r.drain(100, take), 0u);
  ASSERT_EQ(got.size(), 12u);
  for (std::uint64_t i = 0; i < 12; ++i) EXPECT_EQ(got[i], i);
}

TEST(PairRing, MultiProducerRingIgnoresTheUnpublishedPath) {
  pair_ring r(8);
  am_message m = small(0, 0);
  ASSERT_TRUE(r.try_push(m));
  EXPECT_FALSE(r.holds_unpublished());  // try_push publishes at once; its tail runs ahead of the slots
  std::vector<std::uint64_t> got;
  EXPECT_EQ(r.drain(100, [&](am_message&& x) { got.push_back(fields(x).second); }, true), 1u);
}

TEST(PairRing, SingleProducerThreadAgainstConsumer) {
  pair_ring r(64);
  constexpr std::uint64_t n = 200000;
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < n; ++i) {
      am_message m = small(0, i);
      while (!r.try_write_single(m)) {
        r.publish();
        std::this_thread::yield();
      }
      if (i % 7 == 0) r.publish();  // batches of varying size
    }
    r.publish();
  });
  std::uint64_t next = 0;
  while (next < n)
    r.drain(16, [&](am_message&& m) {
      EXPECT_EQ(fields(m).second, next);  // nothing lost, duplicated or reordered
      ++next;
    });
  producer.join();
  EXPECT_FALSE(r.ready());
}

TEST(PairRing, SharedRingReportsFullUntilTheConsumerFreesSlots) {
  pair_ring r(8);
  for (std::uint64_t i = 0; i < 8; ++i) {
    am_message m = small(1, i);
    ASSERT_TRUE(r.try_push(m));  // published at once: no publish() needed
  }
  am_message extra = small(1, 99);
  EXPECT_FALSE(r.try_push(extra));
  EXPECT_EQ(fields(extra).second, 99u);
  std::vector<std::uint64_t> got;
  EXPECT_EQ(r.drain(2, [&](am_message&& m) { got.push_back(fields(m).second); }), 2u);
  for (std::uint64_t i = 8; i < 10; ++i) {
    am_message m = small(1, i);
    ASSERT_TRUE(r.try_push(m));
  }
  EXPECT_FALSE(r.try_push(extra));
  EXPECT_EQ(r.drain(100, [&](am_message&& m) { got.push_back(fields(m).second); }), 8u);
  ASSERT_EQ(got.size(), 10u);
  for (std::uint64_t i = 0; i < 10; ++i) EXPECT_EQ(got[i], i);
}

TEST(PairRing, ManyProducersEachInOrder) {
  pair_ring r(64);
  constexpr int producers = 4;
  constexpr std::uint64_t each = 50000;
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&r, p] {
      for (std::uint64_t i = 0; i < each; ++i) {
        am_message m = small(static_cast<std::uint32_t>(p), i);
        while (!r.try_push(m)) std::this_thread::yield();
      }
    });
  std::vector<std::uint64_t> next(producers, 0);
  std::uint64_t total = 0;
  while (total < producers * each)
    total += r.drain(16, [&](am_message&& m) {
      auto [p, seq] = fields(m);
      ASSERT_LT(p, static_cast<std::uint64_t>(producers));
      EXPECT_EQ(seq, next[p]);  // one producer's messages stay in its order
      ++next[p];
    });
  for (auto& t : threads) t.join();
  for (int p = 0; p < producers; ++p) EXPECT_EQ(next[p], each);
}

TEST(PairRing, DestroyingReleasesUndeliveredMessages) {
  {
    pair_ring r(16);
    for (int i = 0; i < 5; ++i) {
      am_message m = with_payload(4096);
      ASSERT_TRUE(r.try_write_single(m));
      if (i == 2) r.publish();  // some published, some not: all released
    }
    EXPECT_EQ(alive.load(), 5);
  }
  EXPECT_EQ(alive.load(), 0);
}

TEST(ReturnChannel, LargeBlocksAreFreedByTheirOwner) {
  am_return_channel home;
  am_message m = with_payload(64 * 1024);
  m.return_out_of_line_to(&home);
  // The receiver is done with it on another thread: the payload stays
  // alive, waiting for its owner...
  std::thread receiver([msg = std::move(m)]() mutable { msg = am_message{}; });
  receiver.join();
  EXPECT_EQ(alive.load(), 1);
  EXPECT_TRUE(home.holding());
  home.free_all();  // ...which frees it on its own thread
  EXPECT_EQ(alive.load(), 0);
  EXPECT_FALSE(home.holding());
  home.free_all();  // nothing left: a no-op
}

TEST(ReturnChannel, SmallMessagesAreFreedWhereTheyEnd) {
  am_return_channel home;
  am_message inline_only = small(1, 2);
  inline_only.return_out_of_line_to(&home);  // nothing out of line: nothing to send home
  EXPECT_FALSE(inline_only.has_out_of_line());
  am_message small_body;
  ser::message body;
  body.bytes.assign(200, std::byte{1});  // out of line, but under 1 KiB
  small_body.set_body(std::move(body), {});
  ASSERT_TRUE(small_body.has_out_of_line());
  small_body.return_out_of_line_to(&home);
  small_body = am_message{};  // freed right here (the thread cache takes it)
  EXPECT_FALSE(home.holding());
}

TEST(ReturnChannel, DestroyingTheChannelFreesWhatCameBack) {
  {
    am_return_channel home;
    for (int i = 0; i < 3; ++i) {
      am_message m = with_payload(8192);
      m.return_out_of_line_to(&home);
    }  // each message ends here and sends its block home
    EXPECT_EQ(alive.load(), 3);
  }
  EXPECT_EQ(alive.load(), 0);
}
