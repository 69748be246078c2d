#include "am/mpi/frame_codec.hpp"

namespace weft::detail {

void wire_buffer::reserve_for(std::size_t n) {
  std::size_t cap = cap_ < 4096 ? 4096 : cap_;
  while (cap < size_ + n) cap *= 2;
  std::unique_ptr<std::byte[]> bigger(new std::byte[cap]);
  if (size_ != 0) std::memcpy(bigger.get(), data_.get(), size_);
  data_ = std::move(bigger);
  cap_ = cap;
}

frame_plan plan_frame(const am_message& m, std::size_t eager_limit, std::size_t recv_size) noexcept {
  const std::size_t header = m.header_bytes().size();
  const std::size_t body = m.body_bytes().size();
  const std::size_t n_bulk = m.bulk_count();
  frame_plan p;
  if (fits_compact(m)) {
    p.compact = true;
    p.most_bytes = sizeof(wire_compact_prefix) + header + body;
    return p;
  }
  const std::size_t descriptor = sizeof(wire_prefix) + 8 + header + 8 * n_bulk;  // with a long body
  // A body that would make the frame longer than a posted receive travels
  // apart, like a large segment (the transport keeps `descriptor` itself short).
  p.body_apart = descriptor + body > recv_size;
  p.long_body = p.body_apart || body > short_body_max;
  const std::size_t fixed = descriptor - (p.long_body ? 0 : 8) + (p.body_apart ? 0 : body);
  std::size_t bulk_total = 0;
  for (std::size_t i = 0; i < n_bulk; ++i) bulk_total += m.bulk_segment(i).size();
  const std::size_t padding = n_bulk * (segment_alignment - 1);  // at most
  p.flatten = !p.body_apart && fixed + bulk_total + padding <= eager_limit;
  p.most_bytes = fixed + (p.flatten ? bulk_total + padding : 0);
  return p;
}

void write_frame(wire_buffer& out, const am_message& m, const frame_plan& plan) {
  const auto header = m.header_bytes();
  const auto bytes = m.body_bytes();
  const std::size_t n_bulk = m.bulk_count();
  if (plan.compact) {
    write_compact_frame(out, m);
    return;
  }
  // The frame's exact size, with each flattened segment aligned relative to
  // the start of the message (where the receiver's block starts).
  const std::size_t start = out.size();
  std::size_t frame = sizeof(wire_prefix) + (plan.long_body ? 8 : 0) + header.size() +
                      (plan.body_apart ? 0 : bytes.size()) + 8 * n_bulk;
  if (plan.flatten)
    for (std::size_t i = 0; i < n_bulk; ++i)
      frame = align_up(start + frame, segment_alignment) - start + m.bulk_segment(i).size();
  const wire_prefix pre{wire_magic,
                        static_cast<std::uint8_t>(m.handler),
                        static_cast<std::uint8_t>(header.size()),
                        static_cast<std::uint8_t>((plan.flatten ? wire_flattened : 0) |
                                                  (plan.long_body ? wire_long_body : 0) |
                                                  (plan.body_apart ? wire_body_apart : 0)),
                        static_cast<std::uint16_t>(n_bulk),
                        static_cast<std::uint16_t>(plan.long_body ? 0 : bytes.size())};
  std::byte* w = out.grow(frame);
  auto put = [&w](const void* src, std::size_t n) {
    if (n != 0) std::memcpy(w, src, n);
    w += n;
  };
  put(&pre, sizeof pre);
  if (plan.long_body) {
    const std::uint64_t len = bytes.size();
    put(&len, 8);
  }
  put(header.data(), header.size());
  if (!plan.body_apart) put(bytes.data(), bytes.size());
  for (std::size_t i = 0; i < n_bulk; ++i) {
    const std::uint64_t len = m.bulk_segment(i).size();
    put(&len, 8);
  }
  if (plan.flatten) {
    std::byte* const base = out.data();
    for (std::size_t i = 0; i < n_bulk; ++i) {
      w = base + align_up(static_cast<std::size_t>(w - base), segment_alignment);
      put(m.bulk_segment(i).data(), m.bulk_segment(i).size());
    }
  }
}

const char* read_frame(std::span<const std::byte> message, std::size_t& at, frame_fields& f) {
  const std::size_t size = message.size();
  const std::byte* const base = message.data();
  if (at >= size) return "shorter than its prefix";
  // A compact prefix reads as the full one with no flags and no segments.
  wire_prefix pre;
  const bool compact = (static_cast<std::uint8_t>(base[at]) & wire_compact_mask) == wire_compact_magic;
  const std::size_t prefix_len = compact ? sizeof(wire_compact_prefix) : sizeof pre;
  if (size - at < prefix_len) return "shorter than its prefix";
  if (compact) {
    wire_compact_prefix cp;
    std::memcpy(&cp, base + at, sizeof cp);
    pre = wire_prefix{wire_magic, static_cast<std::uint8_t>(cp.tag & ~wire_compact_mask), cp.header_len, 0, 0,
                      cp.body_len};
  } else {
    std::memcpy(&pre, base + at, sizeof pre);
    if (pre.magic != wire_magic) return "bad magic";
  }
  if (pre.header_len > am_header_capacity) return "protocol header too long";
  if ((pre.flags & ~wire_known_flags) != 0) return "unknown frame flags";
  f.body_apart = (pre.flags & wire_body_apart) != 0;
  f.flattened = (pre.flags & wire_flattened) != 0;
  if (f.body_apart && (pre.flags & (wire_long_body | wire_flattened)) != wire_long_body)
    return "a body sent apart without its length";
  at += prefix_len;
  f.handler = pre.handler;
  f.body_len = pre.body_len;
  if (pre.flags & wire_long_body) {
    if (size - at < 8) return "shorter than its prefix";
    std::memcpy(&f.body_len, base + at, 8);
    at += 8;
    // Checked alone first: a forged 64-bit length would overflow the sum below.
    if (f.body_len > (f.body_apart ? wire_length_max : static_cast<std::uint64_t>(size - at)))
      return "lengths exceed the message";
  }
  const std::size_t inline_body = f.body_apart ? 0 : static_cast<std::size_t>(f.body_len);
  if (pre.header_len + inline_body + 8ull * pre.n_bulk > size - at) return "lengths exceed the message";
  f.header_at = at;
  f.header_len = pre.header_len;
  at += pre.header_len;
  f.body_at = at;
  at += inline_body;
  f.bulk_lens.resize(pre.n_bulk);
  for (auto& l : f.bulk_lens) {
    std::memcpy(&l, base + at, 8);
    at += 8;
    if (l > wire_length_max) return "bulk segment length out of range";
  }
  f.bulk_at.clear();
  if (!f.flattened) return nullptr;
  for (const std::uint64_t l : f.bulk_lens) {
    const std::size_t off = align_up(at, segment_alignment);
    if (off > size || l > size - off) return "flattened segments exceed the message";
    f.bulk_at.push_back(off);
    at = off + static_cast<std::size_t>(l);
  }
  return nullptr;
}

}  // namespace weft::detail
