// The host ranges the API takes besides vectors and pointers: map clauses
// on std::span (const or not, any extent) and copies from and to vectors
// and spans, as docs/OFFLOAD.md shows them.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <span>
#include <vector>

#include "spmd_main.hpp"
#include "weft/offload.hpp"

namespace {

using weft::test::on_every_rank;

void add_into(std::span<const int> in, std::span<int> out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] += in[i];
}

void copy_into(std::span<const int> in, std::span<int> out) { std::copy(in.begin(), in.end(), out.begin()); }

weft::device remote_device() { return weft::devices_of((weft::rank() + 1) % weft::nranks()).back(); }

TEST(OffloadSpans, MapClausesTakeSpans) {
  on_every_rank([] {
    const weft::device d = remote_device();
    std::vector<int> host(12);
    std::iota(host.begin(), host.end(), 0);
    const std::span<int> all(host);
    const std::span<const int> in = all.first(4);
    const std::span<int, 4> out = all.subspan<4, 4>();
    weft::target(d, add_into, weft::map_to(all.first(4)), weft::map_tofrom(out)).get();
    EXPECT_EQ(host[4], 4 + 0);
    EXPECT_EQ(host[7], 7 + 3);
    weft::target(d, copy_into, weft::map_to(in), weft::map_from(all.last(4))).get();
    EXPECT_EQ(host[8], 0);
    EXPECT_EQ(host[11], 3);
    weft::target(d, [](std::span<int> o) { for (auto& v : o) v = -1; }, weft::map_alloc(all.first(2))).get();
    EXPECT_EQ(host[0], 0);  // map_alloc copies nothing back
  });
}

TEST(OffloadSpans, DataDirectivesTakeSpans) {
  on_every_rank([] {
    const weft::device d = remote_device();
    std::vector<int> host(8, 1);
    const std::span<int> s(host);
    const std::span<const int> cs(host);
    weft::target_enter_data(d, weft::map_to(cs)).get();
    weft::target_enter_data(d, weft::map_alloc(s)).get();  // present: counted
    weft::target(d, [](std::span<int> v) { for (auto& x : v) x *= 10; }, weft::map_tofrom(s)).get();
    weft::target_exit_data(d, weft::map_release(cs)).get();
    EXPECT_EQ(host[0], 1);
    weft::target_update(d, weft::map_from(s)).get();
    EXPECT_EQ(host[0], 10);
    weft::target_exit_data(d, weft::map_delete(s)).get();
    host.assign(8, 3);
    weft::target(d, [](std::span<int> v) { for (auto& x : v) x *= 10; }, weft::map_tofrom(s)).get();
    EXPECT_EQ(host[7], 30);  // deleted: copied both ways for the task alone
  });
}

TEST(OffloadSpans, CopiesTakeVectorsAndSpans) {
  on_every_rank([] {
    const weft::device d = remote_device();
    auto buf = weft::allocate<long>(d, 6).get();
    std::vector<long> v{1, 2, 3};
    std::array<long, 3> a{4, 5, 6};
    weft::copy(buf, 0, v).get();                      // a vector
    weft::copy(buf, 3, std::span<long>(a)).get();     // a non-const span
    std::vector<long> back(6);
    weft::copy(back, buf, 0).get();                   // into a vector
    EXPECT_EQ(back, (std::vector<long>{1, 2, 3, 4, 5, 6}));
    std::array<long, 2> tail{};
    weft::copy(std::span<long, 2>(tail), buf, 4).get();  // into a span of fixed extent
    EXPECT_EQ(tail[0], 5);
    EXPECT_EQ(tail[1], 6);
    weft::deallocate(buf).get();
  });
}

}  // namespace
