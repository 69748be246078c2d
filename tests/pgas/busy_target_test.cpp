// A put, a get and an atomic to a rank on the same node complete while that
// rank computes without making any weft call: the target does not take part.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "compute_until_flag.hpp"
#include "spmd_main.hpp"

using weft::test::on_every_rank;

namespace {
// Ranks 0 and 1 share a node unless --weft:node-size=1 (WEFT_NODE_SIZE=1,
// as the _ns1 tests run) makes every rank a node of its own.
bool direct_access() {
  const char* v = std::getenv("WEFT_NODE_SIZE");
  return v == nullptr || std::strcmp(v, "1") != 0;
}

struct mailbox {
  std::int64_t flag;     // set by the origin once its operations completed
  std::int64_t counter;  // the atomic's target
  std::int64_t data[16]; // the put's target
  std::int64_t source[16];  // the get's source
};
}  // namespace

TEST(PgasBusyTarget, OperationsCompleteWhileTheTargetComputes) {
  if (!direct_access())
    GTEST_SKIP() << "with --weft:node-size=1 the target serves messages unless the transport is one-sided "
                    "(one_sided_path_test)";
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    if (n < 2) return;
    auto box = weft::allocate_symmetric<mailbox>();
    std::memset(box.local(), 0, sizeof(mailbox));
    for (int i = 0; i < 16; ++i) box.local()->source[i] = 100 * me + i;
    weft::barrier();
    if (me == 1) {
      // The long computation: no weft call until the origin's flag shows up.
      EXPECT_TRUE(weft::test::compute_until_flag(box.local()->flag))
          << "the origin's operations did not complete while rank 1 computed";
      for (int i = 0; i < 16; ++i) EXPECT_EQ(box.local()->data[i], 7000 + i);
      EXPECT_EQ(box.local()->counter, 5);
    } else if (me == 0) {
      auto target = box.on(1);
      std::int64_t out[16], in[16];
      for (int i = 0; i < 16; ++i) out[i] = 7000 + i;
      auto p = weft::put(weft::global_ptr<std::int64_t>::at(1, target.offset() + offsetof(mailbox, data)),
                         std::span<const std::int64_t>(out));
      auto g = weft::get(weft::global_ptr<std::int64_t>::at(1, target.offset() + offsetof(mailbox, source)),
                         std::span<std::int64_t>(in));
      auto a = weft::atomic_fetch_add(weft::global_ptr<std::int64_t>::at(1, target.offset() + offsetof(mailbox, counter)),
                                      std::int64_t{5});
      p.get();
      g.get();
      EXPECT_EQ(a.get(), 0);
      for (int i = 0; i < 16; ++i) EXPECT_EQ(in[i], 100 + i);
      // Only now may the target stop computing.
      weft::atomic_store(weft::global_ptr<std::int64_t>::at(1, target.offset() + offsetof(mailbox, flag)),
                         std::int64_t{1}).get();
    }
    weft::barrier();
    weft::free_symmetric(box);
  });
}
