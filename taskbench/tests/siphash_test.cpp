#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "taskbench/core.hpp"

namespace {

std::array<std::uint8_t, 16> reference_key() {
  std::array<std::uint8_t, 16> key{};
  for (int i = 0; i < 16; ++i) key[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
  return key;
}

TEST(SipHash, PublishedVector15Bytes) {
  // SipHash paper, appendix A: key 00..0f, message 00..0e.
  std::vector<std::uint8_t> msg(15);
  for (int i = 0; i < 15; ++i) msg[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
  EXPECT_EQ(taskbench::siphash24(msg.data(), msg.size(), reference_key()), UINT64_C(0xa129ca6149be45e5));
}

TEST(SipHash, ReferenceVectorEmptyMessage) {
  // First entry of the reference implementation's vectors (64-bit output).
  EXPECT_EQ(taskbench::siphash24(nullptr, 0, reference_key()), UINT64_C(0x726fdb47dd0e0e31));
}

TEST(SipHash, KeyOfTheSpecification) {
  const auto& key = taskbench::random_key();
  for (int i = 0; i < 15; ++i) EXPECT_EQ(key[static_cast<std::size_t>(i)], i + 1);
  EXPECT_EQ(key[15], 0);
}

TEST(RandomUniform, IsHashTimesTwoToMinus64OverLittleEndianWords) {
  const std::int64_t words[5] = {0, 3, 1, 7, -2};
  unsigned char bytes[40];
  for (int w = 0; w < 5; ++w)
    for (int b = 0; b < 8; ++b)
      bytes[w * 8 + b] = static_cast<unsigned char>(static_cast<std::uint64_t>(words[w]) >> (8 * b));
  std::uint64_t h = taskbench::siphash24(bytes, sizeof bytes, taskbench::random_key());
  EXPECT_EQ(taskbench::random_uniform(words), static_cast<double>(h) * 0x1p-64);
}

TEST(RandomUniform, DeterministicInRangeAndRoughlyUniform) {
  double sum = 0;
  int below_quarter = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const std::int64_t words[3] = {1, i, 2 * i};
    double u = taskbench::random_uniform(words);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    ASSERT_EQ(u, taskbench::random_uniform(words));
    sum += u;
    below_quarter += u < 0.25;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.01);
  EXPECT_NEAR(static_cast<double>(below_quarter) / n, 0.25, 0.015);
}

}  // namespace
