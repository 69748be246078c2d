// Collectives on any number of ranks: every root, empty and large values,
// rank order with non-commutative ops, the same bits everywhere.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "spmd_main.hpp"

using weft::test::on_every_rank;

namespace {

/// x -> a x + b (mod 2^64); composing them is associative, not commutative.
struct affine {
  std::uint64_t a, b;
  bool operator==(const affine&) const = default;
};
/// First f, then g.
affine then(affine f, affine g) { return {g.a * f.a, g.a * f.b + g.b}; }
affine affine_of(int r) { return {std::uint64_t(2 * r + 3), std::uint64_t(r * r + 1)}; }

std::string ranks_up_to(int n) {
  std::string s;
  for (int r = 0; r < n; ++r) s += std::to_string(r) + ",";
  return s;
}

std::uint64_t bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

/// Values whose sum depends on the bracketing.
double awkward(int r) { return (r % 3 == 0 ? 1e16 : 1.0) * (r % 2 ? -1.0 : 1.0) + 0.1 * r; }


void barrier_broadcast_reduce() {
  const int me = weft::rank(), n = weft::nranks();
  weft::barrier();
  EXPECT_EQ(weft::broadcast(me == 0 ? std::string("from root") : std::string(), 0), "from root");
  const int root = n - 1;
  EXPECT_EQ(weft::broadcast(me * 10, root), root * 10);
  long sum = weft::reduce(long(me + 1), std::plus<>{}, root);
  if (me == root) {
    EXPECT_EQ(sum, long(n) * (n + 1) / 2);
  }
  EXPECT_EQ(weft::allreduce(long(me + 1), std::plus<>{}), long(n) * (n + 1) / 2);
  EXPECT_EQ(weft::allreduce(me, [](int a, int b) { return a > b ? a : b; }), n - 1);
  EXPECT_EQ(weft::allreduce(std::to_string(me) + ",", std::plus<>{}), ranks_up_to(n));
}

/// Every root up to 8 ranks; beyond, the ends and the middle.
std::vector<int> roots(int n) {
  std::vector<int> r;
  for (int i = 0; i < n; ++i)
    if (n <= 8 || i == 0 || i == n / 2 || i == n - 1) r.push_back(i);
  return r;
}

void every_root() {
  const int me = weft::rank(), n = weft::nranks();
  for (int root : roots(n)) {
    const std::string tag = "root " + std::to_string(root);
    EXPECT_EQ(weft::broadcast(me == root ? tag : std::string("wrong"), root), tag);
    const std::string cat = weft::reduce(std::to_string(me) + ",", std::plus<>{}, root);
    EXPECT_EQ(cat, me == root ? ranks_up_to(n) : std::string());
    auto g = weft::gather(std::vector<int>(std::size_t(me % 4), me), root);
    if (me == root) {
      ASSERT_EQ(int(g.size()), n);
      for (int r = 0; r < n; ++r) EXPECT_EQ(g[r], std::vector<int>(std::size_t(r % 4), r)) << tag;
    } else {
      EXPECT_TRUE(g.empty());
    }
    std::vector<std::string> parts;
    if (me == root)
      for (int r = 0; r < n; ++r) parts.push_back(tag + " to " + std::to_string(r));
    EXPECT_EQ(weft::scatter(parts, root), tag + " to " + std::to_string(me));
  }
}

void gather_allgather_vectors() {
  const int me = weft::rank(), n = weft::nranks();
  auto g = weft::gather(std::vector<int>(me + 1, me), 0);
  if (me == 0) {
    ASSERT_EQ(int(g.size()), n);
    for (int r = 0; r < n; ++r) EXPECT_EQ(g[r], std::vector<int>(r + 1, r));
  } else {
    EXPECT_TRUE(g.empty());
  }
  auto all = weft::allgather(me * me);
  ASSERT_EQ(int(all.size()), n);
  for (int r = 0; r < n; ++r) EXPECT_EQ(all[r], r * r);
  auto words = weft::allgather(std::string(std::size_t(me % 3), char('a' + me % 26)));
  ASSERT_EQ(int(words.size()), n);
  for (int r = 0; r < n; ++r) EXPECT_EQ(words[r], std::string(std::size_t(r % 3), char('a' + r % 26)));
}

void rank_order_with_non_commutative_ops() {
  const int me = weft::rank(), n = weft::nranks();
  affine expect{1, 0};
  for (int r = 0; r < n; ++r) expect = then(expect, affine_of(r));
  EXPECT_EQ(weft::allreduce(affine_of(me), then), expect);
  for (int root : {0, n / 2, n - 1}) {
    const affine at_root = weft::reduce(affine_of(me), then, root);
    if (me == root) {
      EXPECT_EQ(at_root, expect);
    }
  }
  // Element by element, trivially copyable (raw bytes; split from 2 KiB)
  // and not (whole-value path).
  for (std::size_t len : {std::size_t(1), std::size_t(300), std::size_t(1001)}) {
    std::vector<affine> mine(len), expect_each(len, affine{1, 0});
    for (std::size_t i = 0; i < len; ++i) {
      mine[i] = affine_of(me + int(i));
      for (int r = 0; r < n; ++r) expect_each[i] = then(expect_each[i], affine_of(r + int(i)));
    }
    EXPECT_EQ(weft::allreduce(mine, weft::elementwise{then}), expect_each) << len << " elements";
  }
  std::vector<std::string> words = {std::to_string(me), "x" + std::to_string(me) + ","};
  std::string first, second;
  for (int r = 0; r < n; ++r) {
    first += std::to_string(r);
    second += "x" + std::to_string(r) + ",";
  }
  EXPECT_EQ(weft::allreduce(words, weft::elementwise{std::plus<>{}}), (std::vector<std::string>{first, second}));
  // Reduce with the elementwise op through the generic path.
  auto at0 = weft::reduce(words, weft::elementwise{std::plus<>{}}, 0);
  if (me == 0) {
    EXPECT_EQ(at0, (std::vector<std::string>{first, second}));
  }
}

void same_bits_everywhere() {
  const int me = weft::rank(), n = weft::nranks();
  const double all = weft::allreduce(awkward(me), std::plus<>{});
  // Every rank got the same bits, and reduce brackets the same way at any root.
  auto seen = weft::allgather(bits(all));
  for (int r = 0; r < n; ++r) EXPECT_EQ(seen[r], bits(all)) << "rank " << r;
  for (int root : roots(n)) {
    const double at_root = weft::reduce(awkward(me), std::plus<>{}, root);
    if (me == root) {
      EXPECT_EQ(bits(at_root), bits(all)) << "root " << root;
    }
  }
  // Elementwise (split into halves across ranks) brackets as the scalar one.
  std::vector<double> v(4096);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = awkward(me + int(i % 5)) * double(i + 1);
  const auto sums = weft::allreduce(v, weft::elementwise{std::plus<>{}});
  for (std::size_t i : {std::size_t(0), std::size_t(1234), std::size_t(4095)}) {
    const double scalar = weft::allreduce(v[i], std::plus<>{});
    EXPECT_EQ(bits(sums[i]), bits(scalar)) << "element " << i;
  }
  auto seen_sums = weft::allgather(bits(sums[777]));
  for (int r = 0; r < n; ++r) EXPECT_EQ(seen_sums[r], bits(sums[777])) << "rank " << r;
}

void empty_and_large_values() {
  const int me = weft::rank(), n = weft::nranks();
  EXPECT_EQ(weft::broadcast(std::vector<double>{}, n - 1), std::vector<double>{});
  EXPECT_EQ(weft::allreduce(std::vector<double>{}, weft::elementwise{std::plus<>{}}), std::vector<double>{});
  auto empties = weft::allgather(std::string());
  EXPECT_EQ(empties, std::vector<std::string>(std::size_t(n)));
  // 1 MiB of doubles with exact sums; a length that does not halve evenly.
  const std::size_t len = n > 8 ? 32771 : 131072 + 3;
  std::vector<double> v(len);
  for (std::size_t i = 0; i < len; ++i) v[i] = double(me + 1) * double(i % 1000);
  const auto sums = weft::allreduce(std::move(v), weft::elementwise{std::plus<>{}});
  ASSERT_EQ(sums.size(), len);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < len; ++i) wrong += sums[i] != double(n) * (n + 1) / 2 * double(i % 1000);
  EXPECT_EQ(wrong, 0u);
  std::vector<char> big(std::size_t(1) << 20, char(me == 0 ? 'r' : 'x'));
  const auto got = weft::broadcast(big, 0);
  EXPECT_EQ(got, std::vector<char>(std::size_t(1) << 20, 'r'));
  // Fewer elements than ranks (whole-vector path) and a few above 2 KiB.
  for (std::size_t small : {std::size_t(3), std::size_t(257)}) {
    auto s = weft::allreduce(std::vector<long>(small, me), weft::elementwise{std::plus<>{}});
    EXPECT_EQ(s, std::vector<long>(small, long(n) * (n - 1) / 2));
  }
}

void async_forms_and_many_in_a_row() {
  const int n = weft::nranks();
  const int count = n > 8 ? 16 : 200;  // each waiting _async collective holds a suspended task
  std::vector<weft::future<long>> fs;
  for (int i = 0; i < count; ++i) fs.push_back(weft::allreduce_async(long(i), std::plus<>{}));
  for (int i = 0; i < count; ++i) EXPECT_EQ(fs[i].get(), long(i) * n);
  auto b = weft::barrier_async();
  b.get();
}

void from_inside_nested_tasks() {
  long v = weft::async([] {
             return weft::async([] { return weft::allreduce(1L, std::plus<>{}); }).get();
           }).get();
  EXPECT_EQ(v, weft::nranks());
}

void bad_root_is_an_error_on_every_rank() {
  EXPECT_THROW(weft::broadcast(1, weft::nranks()), std::out_of_range);
  EXPECT_THROW(weft::reduce(1, std::plus<>{}, -1), std::out_of_range);
  EXPECT_EQ(weft::allreduce(1, std::plus<>{}), weft::nranks());  // nothing half-started
}

}  // namespace

TEST(Collectives, BarrierBroadcastReduce) { on_every_rank(barrier_broadcast_reduce); }
TEST(Collectives, EveryRoot) { on_every_rank(every_root); }
TEST(Collectives, GatherAllgatherVectors) { on_every_rank(gather_allgather_vectors); }
TEST(Collectives, RankOrderWithNonCommutativeOps) { on_every_rank(rank_order_with_non_commutative_ops); }
TEST(Collectives, SameBitsEverywhere) { on_every_rank(same_bits_everywhere); }
TEST(Collectives, EmptyAndLargeValues) { on_every_rank(empty_and_large_values); }
TEST(Collectives, AsyncFormsAndManyInARow) { on_every_rank(async_forms_and_many_in_a_row); }
TEST(Collectives, FromInsideNestedTasks) { on_every_rank(from_inside_nested_tasks); }
TEST(Collectives, BadRootIsAnErrorOnEveryRank) { on_every_rank(bad_root_is_an_error_on_every_rank); }

// All of the above in one run: what the 64-rank test runs (starting and
// finalizing 64 ranks costs more than the checks).
TEST(CollectivesOneRun, Reductions) {
  on_every_rank([] {
    barrier_broadcast_reduce();
    every_root();
    gather_allgather_vectors();
    rank_order_with_non_commutative_ops();
    same_bits_everywhere();
    empty_and_large_values();
    async_forms_and_many_in_a_row();
    from_inside_nested_tasks();
    bad_root_is_an_error_on_every_rank();
  });
}
