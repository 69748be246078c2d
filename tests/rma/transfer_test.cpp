// put and get between every pair of ranks, to self, at both completion
// levels, empty and 64 MiB. Run SPMD on every rank (spmd_main.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "pattern.hpp"
#include "spmd_main.hpp"

namespace rma = weft::rma;
using weft::test::fill_pattern;
using weft::test::has_pattern;
using weft::test::on_every_rank;
using weft::test::pattern;
using weft::test::raw_buffer;

namespace {
std::uint64_t seed_of(int from, int to, int what = 0) { return 1000003ull * (from + 1) + 7919ull * (to + 1) + what; }
}  // namespace

// Every rank puts a block into a slot of every rank's segment (itself too),
// checks what landed in its own, then gets its blocks back from everyone.
// Two block sizes: one travels inline, one as a separate (zero-copy) payload.
TEST(RmaTransfer, PutThenGetEveryPair) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    for (std::size_t block : {std::size_t{100}, std::size_t{20011}}) {
      std::vector<std::byte> mem(block * n);
      rma::segment seg = rma::register_memory(mem.data(), mem.size());
      weft::barrier();  // registered everywhere before anyone writes

      std::vector<std::vector<std::byte>> out;
      std::vector<weft::future<void>> done;
      for (int t = 0; t < n; ++t) {
        out.push_back(pattern(block, seed_of(me, t)));
        done.push_back(rma::put(t, seg.id(), me * block, out.back().data(), block));
      }
      for (auto& f : done) f.get();  // remote completion: the data is there
      weft::barrier();               // ...everyone's, so my segment is complete

      int bad = 0;
      for (int from = 0; from < n; ++from) bad += !has_pattern(mem.data() + from * block, block, seed_of(from, me));
      EXPECT_EQ(bad, 0) << "rank " << me << ", block " << block;

      std::vector<std::vector<std::byte>> back(n, std::vector<std::byte>(block));
      done.clear();
      for (int t = 0; t < n; ++t) done.push_back(rma::get(t, seg.id(), me * block, back[t].data(), block));
      for (auto& f : done) f.get();
      for (int t = 0; t < n; ++t) EXPECT_EQ(back[t], out[t]) << "rank " << me << " got back from rank " << t;

      weft::barrier();  // nobody reads my segment any more
      rma::deregister(seg);
      EXPECT_FALSE(seg.valid());
    }
  });
}

// A rank's own segment: both forms, and a put whose source is the segment
// itself (overlapping ranges behave like memmove).
TEST(RmaTransfer, SelfPutAndGet) {
  on_every_rank([] {
    const int me = weft::rank();
    std::vector<std::byte> mem(4096);
    rma::segment seg = rma::register_memory(mem.data(), mem.size());
    auto src = pattern(1000, seed_of(me, me));
    rma::put(me, seg.id(), 10, src.data(), src.size()).get();
    EXPECT_TRUE(has_pattern(mem.data() + 10, 1000, seed_of(me, me)));

    rma::completion_queue cq;
    std::vector<std::byte> back(1000);
    rma::get(me, seg.id(), 10, back.data(), back.size(), cq, 42);
    rma::completion c = cq.wait();
    EXPECT_EQ(c.kind, rma::completion_kind::get);
    EXPECT_EQ(c.rank, me);
    EXPECT_EQ(c.context, 42u);
    EXPECT_EQ(back, src);

    rma::put(me, seg.id(), 0, mem.data() + 10, 1000).get();  // overlapping, within the segment
    EXPECT_TRUE(has_pattern(mem.data(), 1000, seed_of(me, me)));
    rma::deregister(seg);
  });
}

// Zero-byte transfers are valid (and complete) anywhere inside a segment,
// its end included; buffers may then be null.
TEST(RmaTransfer, EmptyTransfers) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    std::vector<std::byte> mem(64);
    rma::completion_queue arrivals;
    rma::segment seg = rma::register_memory(mem.data(), mem.size(), &arrivals);
    weft::barrier();
    const int t = (me + 1) % n;
    rma::put(t, seg.id(), 64, nullptr, 0).get();
    rma::get(t, seg.id(), 0, nullptr, 0).get();
    rma::put(t, seg.id(), 5, mem.data(), 0, {.notify = 3}).get();
    rma::completion a = arrivals.wait();
    EXPECT_EQ(a.rank, (me + n - 1) % n);
    EXPECT_EQ(a.offset, 5u);
    EXPECT_EQ(a.bytes, 0u);
    weft::barrier();
    rma::deregister(seg);
  });
}

// Local completion: the source may be overwritten at once, and the target
// still receives the original (it sees it when the notification arrives).
// Remote completion: a later get already sees the data.
TEST(RmaTransfer, LocalAndRemoteCompletion) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    for (std::size_t size : {std::size_t{64}, std::size_t{1} << 20}) {
      std::vector<std::byte> mem(size);
      rma::completion_queue arrivals;
      rma::segment seg = rma::register_memory(mem.data(), size, &arrivals);
      weft::barrier();

      // local: reuse the source right away
      std::vector<std::byte> src = pattern(size, seed_of(me, right, 1));
      rma::put(right, seg.id(), 0, src.data(), size, {.level = rma::completion_level::local, .notify = 7}).get();
      std::fill(src.begin(), src.end(), std::byte{0xEE});
      rma::completion a = arrivals.wait();
      EXPECT_EQ(a.kind, rma::completion_kind::arrival);
      EXPECT_EQ(a.rank, left);
      EXPECT_EQ(a.context, 7u);
      EXPECT_TRUE(has_pattern(mem.data(), size, seed_of(left, me, 1))) << "size " << size;
      weft::barrier();  // everyone checked before the next put overwrites

      // remote: a get issued after completion reads the new data
      src = pattern(size, seed_of(me, right, 2));
      rma::put(right, seg.id(), 0, src.data(), size).get();
      std::vector<std::byte> back(size);
      rma::get(right, seg.id(), 0, back.data(), size).get();
      EXPECT_EQ(back, src) << "size " << size;
      weft::barrier();

      // the queue form reports the level asked for
      rma::completion_queue cq;
      rma::put(right, seg.id(), 0, src.data(), size, cq, 1, {.level = rma::completion_level::local, .notify = 9});
      rma::put(right, seg.id(), 0, src.data(), size, cq, 2);
      int kinds[2] = {-1, -1};
      for (int i = 0; i < 2; ++i) {
        rma::completion c = cq.wait();
        ASSERT_TRUE(c.context == 1 || c.context == 2);
        kinds[c.context - 1] = static_cast<int>(c.kind);
        EXPECT_EQ(c.rank, right);
        EXPECT_EQ(c.segment, seg.id());
        EXPECT_EQ(c.offset, 0u);
        EXPECT_EQ(c.bytes, size);
      }
      EXPECT_EQ(kinds[0], static_cast<int>(rma::completion_kind::put_local));
      EXPECT_EQ(kinds[1], static_cast<int>(rma::completion_kind::put_remote));
      EXPECT_TRUE(cq.empty());
      // Local completion says nothing about the target: it knows the put
      // landed from the notification, and only then may it deregister.
      EXPECT_EQ(arrivals.wait().context, 9u);
      weft::barrier();
      rma::deregister(seg);
    }
  });
}

// Under ThreadSanitizer every fresh page of a buffer costs a shadow-memory
// page fault (about 1.5 s per 64 MiB here), so the sanitizer build moves
// 16 MiB through the same code; the release build moves 64 MiB.
#if defined(__SANITIZE_THREAD__)
constexpr std::size_t large_size = std::size_t{16} << 20;
#else
constexpr std::size_t large_size = std::size_t{64} << 20;
#endif

// 64 MiB each way between the first and the last rank (itself with one
// rank): a notified put, then a get back.
TEST(RmaTransfer, Large64MiB) {
  on_every_rank([] {
    const int me = weft::rank(), last = weft::nranks() - 1;
    const std::size_t size = large_size;
    rma::completion_queue arrivals;
    auto mem = raw_buffer(me == last ? size : 1);
    rma::segment seg = rma::register_memory(mem.get(), me == last ? size : 1, &arrivals);
    weft::barrier();

    if (me == 0) {
      auto buf = raw_buffer(size);  // (one buffer both ways: fresh memory is slow under TSan)
      fill_pattern(buf.get(), size, seed_of(0, last));
      rma::put(last, seg.id(), 0, buf.get(), size, {.notify = 64}).get();
      std::memset(buf.get(), 0, size);
      rma::get(last, seg.id(), 0, buf.get(), size).get();
      EXPECT_TRUE(has_pattern(buf.get(), size, seed_of(0, last)));
    }
    if (me == last) {
      rma::completion a = arrivals.wait();
      EXPECT_EQ(a.rank, 0);
      EXPECT_EQ(a.offset, 0u);
      EXPECT_EQ(a.bytes, size);
      EXPECT_EQ(a.context, 64u);
      EXPECT_TRUE(has_pattern(mem.get(), size, seed_of(0, last)));
    }
    weft::barrier();
    rma::deregister(seg);
  });
}
