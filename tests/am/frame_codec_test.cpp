// The mpi transport's frame codec on its own: what write_frame lays out,
// read_frame gives back, and bytes that are not frames are refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "am/message.hpp"
#include "am/mpi/frame_codec.hpp"

using namespace weft::detail;

namespace {

constexpr std::size_t eager = 64 * 1024;
constexpr std::size_t recv = 64 * 1024;

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + seed) & 0xff);
  return v;
}

struct sample {
  am_handler handler = am_handler::call;
  std::vector<std::byte> header, body;
  std::vector<std::vector<std::byte>> segments;

  am_message message() const {
    am_message m;
    m.handler = handler;
    m.set_header(header.data(), header.size());
    m.set_body_bytes(body.data(), body.size());
    if (!segments.empty()) {
      auto& ool = m.spill();
      for (const auto& s : segments) ool.bulk.emplace_back(s.data(), s.size());
    }
    return m;
  }
};

sample make(std::size_t header, std::size_t body, std::vector<std::size_t> segments = {}) {
  sample s;
  s.header = pattern(header, 1);
  s.body = pattern(body, 2);
  unsigned seed = 3;
  for (std::size_t n : segments) s.segments.push_back(pattern(n, seed++));
  return s;
}

frame_plan append(wire_buffer& out, const sample& s, std::size_t eager_limit = eager, std::size_t recv_size = recv) {
  const am_message m = s.message();
  const frame_plan plan = plan_frame(m, eager_limit, recv_size);
  const std::size_t before = out.size();
  write_frame(out, m, plan);
  EXPECT_LE(out.size() - before, plan.most_bytes);
  return plan;
}

std::vector<std::byte> bytes_at(std::span<const std::byte> msg, std::size_t at, std::size_t n) {
  return {msg.begin() + static_cast<std::ptrdiff_t>(at), msg.begin() + static_cast<std::ptrdiff_t>(at + n)};
}

// Reads the next frame and checks it against `s` (its segments only when
// they travel inline).
void expect_frame(std::span<const std::byte> msg, std::size_t& at, const sample& s, const frame_plan& plan) {
  frame_fields f;
  ASSERT_EQ(read_frame(msg, at, f), nullptr);
  EXPECT_EQ(f.handler, static_cast<std::uint8_t>(s.handler));
  EXPECT_EQ(bytes_at(msg, f.header_at, f.header_len), s.header);
  EXPECT_EQ(f.body_len, s.body.size());
  EXPECT_EQ(f.body_apart, plan.body_apart);
  if (!f.body_apart) {
    EXPECT_EQ(bytes_at(msg, f.body_at, s.body.size()), s.body);
  }
  ASSERT_EQ(f.bulk_lens.size(), s.segments.size());
  for (std::size_t i = 0; i < s.segments.size(); ++i) EXPECT_EQ(f.bulk_lens[i], s.segments[i].size());
  if (!s.segments.empty()) {
    EXPECT_EQ(f.flattened, plan.flatten);
  }
  if (plan.flatten) {
    ASSERT_EQ(f.bulk_at.size(), s.segments.size());
    for (std::size_t i = 0; i < s.segments.size(); ++i) {
      EXPECT_EQ(f.bulk_at[i] % segment_alignment, 0u);
      EXPECT_EQ(bytes_at(msg, f.bulk_at[i], s.segments[i].size()), s.segments[i]);
    }
  }
}

std::span<const std::byte> view(const wire_buffer& b) { return {b.data(), b.size()}; }

// Writes `s` as the only frame of a message, reads it back; the plan and
// the message's length.
std::pair<frame_plan, std::size_t> round_trip(const sample& s, std::size_t limits = eager) {
  wire_buffer out;
  const frame_plan plan = append(out, s, limits, limits);
  std::size_t at = 0;
  expect_frame(view(out), at, s, plan);
  EXPECT_EQ(at, out.size());
  return {plan, out.size()};
}

// Why read_frame refuses `s`'s frame with the 64-bit word at `offset` replaced by `word`.
const char* refusal_with_word(const sample& s, std::size_t offset, std::uint64_t word, std::size_t limits = eager) {
  wire_buffer out;
  append(out, s, limits, limits);
  std::memcpy(out.data() + offset, &word, 8);
  std::size_t at = 0;
  frame_fields f;
  return read_frame(view(out), at, f);
}

}  // namespace

TEST(FrameCodec, SmallCallUsesTheCompactPrefix) {
  const auto [plan, bytes] = round_trip(make(24, 9));
  EXPECT_TRUE(plan.compact);
  EXPECT_EQ(bytes, sizeof(wire_compact_prefix) + 24 + 9);
}

TEST(FrameCodec, EmptyBodyAndHeaderRoundTrip) { EXPECT_TRUE(round_trip(make(0, 0)).first.compact); }

TEST(FrameCodec, LargeBodyCarriesItsLength) {
  const frame_plan plan = round_trip(make(16, 100000), 1 << 20).first;  // past the 16-bit body length
  EXPECT_FALSE(plan.compact);
  EXPECT_TRUE(plan.long_body);
  EXPECT_FALSE(plan.body_apart);
}

TEST(FrameCodec, BodyTooLongForAReceiveTravelsApart) {
  const auto [plan, bytes] = round_trip(make(16, 5000, {300}), 4096);
  EXPECT_TRUE(plan.body_apart);
  EXPECT_FALSE(plan.flatten);
  EXPECT_LT(bytes, 100u);  // the descriptor only
}

TEST(FrameCodec, SegmentsTravelInlineAndAligned) {
  const sample s = make(20, 37, {1, 17, 4096});
  // Behind a 5-byte frame: segments are aligned from the message's start.
  const sample lead = make(2, 0);
  wire_buffer msg;
  const frame_plan lead_plan = append(msg, lead);
  const frame_plan plan = append(msg, s);
  EXPECT_TRUE(plan.flatten);
  std::size_t at = 0;
  expect_frame(view(msg), at, lead, lead_plan);
  expect_frame(view(msg), at, s, plan);
  EXPECT_EQ(at, msg.size());
}

TEST(FrameCodec, SegmentsPastTheEagerLimitTravelApart) {
  const frame_plan plan = round_trip(make(8, 40, {200000, 3})).first;
  EXPECT_FALSE(plan.flatten);
  EXPECT_FALSE(plan.body_apart);
}

TEST(FrameCodec, BatchOfSeveralFramesReadsBackInOrder) {
  std::vector<sample> samples = {make(24, 8), make(0, 300), make(32, 0, {64, 64}), make(5, 255), make(16, 70000)};
  samples[1].handler = am_handler::reply;
  wire_buffer out;
  std::vector<frame_plan> plans;
  for (const auto& s : samples) plans.push_back(append(out, s, 1 << 20, 1 << 20));
  std::size_t at = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) expect_frame(view(out), at, samples[i], plans[i]);
  EXPECT_EQ(at, out.size());
}

TEST(FrameCodec, EveryTruncationIsRefused) {
  const std::vector<sample> samples = {make(24, 8), make(16, 1000, {40, 3000})};
  for (const auto& s : samples) {
    wire_buffer out;
    append(out, s);
    for (std::size_t n = 0; n < out.size(); ++n) {
      std::size_t at = 0;
      frame_fields f;
      EXPECT_NE(read_frame(std::span<const std::byte>(out.data(), n), at, f), nullptr) << "cut at " << n;
    }
  }
}

TEST(FrameCodec, CorruptPrefixesAreRefused) {
  const sample s = make(16, 1000, {40});
  auto corrupt = [&](auto&& edit) {
    wire_buffer out;
    append(out, s);
    edit(out.data());
    std::size_t at = 0;
    frame_fields f;
    return read_frame(view(out), at, f);
  };
  EXPECT_STREQ(corrupt([](std::byte* p) { p[0] = std::byte{0x11}; }), "bad magic");
  EXPECT_STREQ(corrupt([](std::byte* p) { p[2] = std::byte{static_cast<unsigned char>(am_header_capacity + 1)}; }),
               "protocol header too long");
  EXPECT_STREQ(corrupt([](std::byte* p) { p[3] |= std::byte{0x80}; }), "unknown frame flags");
  EXPECT_STREQ(corrupt([](std::byte* p) { p[3] = std::byte{wire_body_apart}; }),
               "a body sent apart without its length");
  EXPECT_STREQ(corrupt([](std::byte* p) {
                 const std::uint16_t n = 0xffff;
                 std::memcpy(p + 4, &n, 2);  // n_bulk
               }),
               "lengths exceed the message");
}

TEST(FrameCodec, ForgedLengthsAreRefused) {
  const std::size_t lens_at = sizeof(wire_prefix) + 8 + 300;  // prefix, 8-byte header, 300-byte body
  // A long body whose 64-bit length would overflow a sum.
  EXPECT_STREQ(refusal_with_word(make(8, 70000), sizeof(wire_prefix), ~std::uint64_t{0}, 1 << 20),
               "lengths exceed the message");
  EXPECT_STREQ(refusal_with_word(make(8, 300, {64}), lens_at, wire_length_max + 1), "bulk segment length out of range");
  EXPECT_STREQ(refusal_with_word(make(8, 300, {64}), lens_at, 65), "flattened segments exceed the message");
}

// read_compact_frame (the receivers' fast path) reads exactly what
// read_frame reads for a compact frame, and leaves everything else,
// truncated or corrupt compact frames included, to read_frame.
TEST(FrameCodec, CompactReaderAgreesWithReadFrame) {
  std::vector<sample> samples = {make(8, 24), make(0, 0), make(32, 255), make(16, 300), make(8, 8, {64})};
  samples[1].handler = am_handler::reply;
  wire_buffer out;
  std::vector<frame_plan> plans;
  for (const auto& s : samples) plans.push_back(append(out, s));
  std::size_t at = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::size_t fast_at = at;
    compact_frame c;
    const bool fast = read_compact_frame(view(out), fast_at, c);
    EXPECT_EQ(fast, plans[i].compact) << "frame " << i;
    frame_fields f;
    std::size_t general_at = at;
    ASSERT_EQ(read_frame(view(out), general_at, f), nullptr);
    if (fast) {
      EXPECT_EQ(fast_at, general_at);
      EXPECT_EQ(c.handler, f.handler);
      EXPECT_EQ(c.header_at, f.header_at);
      EXPECT_EQ(c.header_len, f.header_len);
      EXPECT_EQ(c.body_at, f.body_at);
      EXPECT_EQ(c.body_len, f.body_len);
    } else {
      EXPECT_EQ(fast_at, at);  // untouched
    }
    at = general_at;
  }
  EXPECT_EQ(at, out.size());
}

TEST(FrameCodec, CompactReaderRefusesTruncatedAndCorruptFrames) {
  wire_buffer out;
  append(out, make(24, 8));
  for (std::size_t n = 0; n < out.size(); ++n) {
    std::size_t at = 0;
    compact_frame c;
    EXPECT_FALSE(read_compact_frame(std::span<const std::byte>(out.data(), n), at, c)) << "cut at " << n;
  }
  out.data()[1] = std::byte{static_cast<unsigned char>(am_header_capacity + 1)};  // header_len
  std::size_t at = 0;
  compact_frame c;
  EXPECT_FALSE(read_compact_frame(view(out), at, c));
}
