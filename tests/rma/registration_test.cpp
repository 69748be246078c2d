// Registration: symmetric ids without a collective, handles, misuse.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "spmd_main.hpp"

namespace rma = weft::rma;
using weft::test::on_every_rank;

// Ranks that register in the same order get the same ids: 0, 1, 2, ...
// (a fresh runtime per test), whatever the sizes and addresses.
TEST(RmaRegistration, SymmetricIds) {
  on_every_rank([] {
    const int me = weft::rank();
    std::vector<char> a(16 + me), b(1 << 12), c(3);
    rma::segment sa = rma::register_memory(a.data(), a.size());
    rma::segment sb = rma::register_memory(b.data(), b.size());
    rma::segment sc = rma::register_memory(c.data(), c.size());
    EXPECT_EQ(sa.id(), 0u);
    EXPECT_EQ(sb.id(), 1u);
    EXPECT_EQ(sc.id(), 2u);
    EXPECT_EQ(sa.data(), a.data());
    EXPECT_EQ(sa.size(), a.size());
    EXPECT_EQ(sa.rank(), me);
    const auto all = weft::allgather(std::vector<rma::segment_id>{sa.id(), sb.id(), sc.id()});
    for (const auto& ids : all) EXPECT_EQ(ids, all[0]);

    // A deregistered id is not reused.
    rma::deregister(sb);
    rma::segment sd = rma::register_memory(b.data(), b.size());
    EXPECT_EQ(sd.id(), 3u);
    weft::barrier();
    rma::deregister(sa);
    rma::deregister(sc);
    rma::deregister(sd);
  });
}

TEST(RmaRegistration, MisuseThrows) {
  on_every_rank([] {
    char buf[8];
    EXPECT_THROW(rma::register_memory(nullptr, 8), std::invalid_argument);
    EXPECT_THROW(rma::register_memory(buf, 0), std::invalid_argument);
    rma::segment empty;
    EXPECT_FALSE(empty.valid());
    EXPECT_THROW(rma::deregister(empty), std::invalid_argument);
    rma::segment s = rma::register_memory(buf, sizeof buf);
    rma::segment copy = s;
    rma::deregister(s);
    EXPECT_THROW(rma::deregister(copy), std::invalid_argument);  // already deregistered
    EXPECT_THROW(rma::put(weft::rank(), 0, 0, nullptr, 1), std::invalid_argument);
    EXPECT_THROW(rma::get(weft::rank(), 0, 0, nullptr, 1), std::invalid_argument);
  });
}
