// The cache's byte range sets: adds merge what overlaps or touches and keep
// the rest in order; gaps are what a range lacks.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "pgas/byte_ranges.hpp"

using weft::pgas::detail::byte_ranges;

namespace {
std::vector<std::pair<std::size_t, std::size_t>> as_pairs(const std::vector<byte_ranges::range>& rs) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const auto& r : rs) out.emplace_back(r.begin, r.end);
  return out;
}
using pairs = std::vector<std::pair<std::size_t, std::size_t>>;
}  // namespace

TEST(ByteRanges, AddsKeepOrderAndMergeWhatTouches) {
  byte_ranges s;
  s.add(10, 20);
  s.add(40, 50);
  s.add(0, 5);  // before all
  EXPECT_EQ(as_pairs(s.items()), (pairs{{0, 5}, {10, 20}, {40, 50}}));
  s.add(60, 70);  // after all
  s.add(25, 30);  // between, touching none
  EXPECT_EQ(as_pairs(s.items()), (pairs{{0, 5}, {10, 20}, {25, 30}, {40, 50}, {60, 70}}));
  s.add(20, 25);  // touches both neighbours: one range
  EXPECT_EQ(as_pairs(s.items()), (pairs{{0, 5}, {10, 30}, {40, 50}, {60, 70}}));
  s.add(35, 65);  // overlaps two
  EXPECT_EQ(as_pairs(s.items()), (pairs{{0, 5}, {10, 30}, {35, 70}}));
  s.add(12, 14);  // inside one
  s.add(7, 7);    // empty
  EXPECT_EQ(as_pairs(s.items()), (pairs{{0, 5}, {10, 30}, {35, 70}}));
  s.add(0, 100);  // covers all
  EXPECT_EQ(as_pairs(s.items()), (pairs{{0, 100}}));
  EXPECT_EQ(s.bytes(), 100u);
}

TEST(ByteRanges, GapsAreWhatARangeLacks) {
  byte_ranges s;
  EXPECT_EQ(as_pairs(s.gaps(0, 10)), (pairs{{0, 10}}));
  s.add(10, 20);
  s.add(30, 40);
  EXPECT_EQ(as_pairs(s.gaps(0, 50)), (pairs{{0, 10}, {20, 30}, {40, 50}}));
  EXPECT_EQ(as_pairs(s.gaps(12, 35)), (pairs{{20, 30}}));
  EXPECT_TRUE(s.gaps(10, 20).empty());
  s.clear();
  EXPECT_TRUE(s.empty());
}
