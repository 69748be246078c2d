// Internal: the wire format of the mpi transport's eager messages (and of
// the node rings' records, which carry the same bytes).
//
// An eager message is a sequence of frames, one per active message. A
// frame: prefix (a long body adds its length), header bytes, body bytes,
// the bulk segment lengths, then either the bulk segments themselves
// (flattened), each starting at an offset from the message's start that is
// a multiple of segment_alignment, or nothing (they follow on the bulk tag,
// in frame order). Aligned segments let a weft::buffer<double> that arrives
// in the receive block be used where it lies.
// An eager message is never longer than the receivers' posted receive
// buffers: a frame whose body alone would not fit sends the body apart too,
// ahead of its segments (wire_body_apart).
// The prefix is 8 bytes, plus 8 more for a body of 64 KiB or more (rare:
// bodies that big are arrays, which travel as bulk segments); a frame with
// no bulk segments and a body under 256 bytes (most remote calls and their
// replies) has a 3-byte compact prefix instead. MPICH/UCX sends a message
// of up to 92 bytes faster than one of 93 or more (its shared-memory
// short-message limit; docs/DISTRIBUTED.md, "The 92-byte short path"), and
// every byte of prefix counts against it: with the compact prefix a remote
// call of a plain function taking a 64-byte weft::buffer is 92 bytes
// (3 prefix, 8 reply token, 16 call id, 1 length, 64 payload), two
// coalesced 8-byte calls 72.
//
// This file knows bytes only: which frames travel with their segments and
// where MPI moves the rest is the transport's business.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "am/message.hpp"

namespace weft::detail {

struct wire_prefix {
  std::uint8_t magic;
  std::uint8_t handler;
  std::uint8_t header_len;
  std::uint8_t flags;      // wire_flattened | wire_long_body | wire_body_apart
  std::uint16_t n_bulk;
  std::uint16_t body_len;  // when not wire_long_body
};
static_assert(sizeof(wire_prefix) == 8);
struct wire_compact_prefix {
  std::uint8_t tag;  // wire_compact_magic in the high 4 bits, the handler in the low 4
  std::uint8_t header_len;
  std::uint8_t body_len;
};
static_assert(sizeof(wire_compact_prefix) == 3);
inline constexpr std::uint8_t wire_magic = 0xf7;
inline constexpr std::uint8_t wire_compact_magic = 0xe0;  // differs from wire_magic in the high 4 bits
inline constexpr std::uint8_t wire_compact_mask = 0xf0;
inline constexpr std::size_t compact_body_max = 0xff;
inline constexpr unsigned compact_handler_max = 0x0f;
inline constexpr std::uint8_t wire_flattened = 1;   // the bulk segments follow inline
inline constexpr std::uint8_t wire_long_body = 2;   // a std::uint64_t body length follows the prefix
inline constexpr std::uint8_t wire_body_apart = 4;  // (with wire_long_body) the body follows apart
inline constexpr std::uint8_t wire_known_flags = wire_flattened | wire_long_body | wire_body_apart;
inline constexpr std::size_t short_body_max = 0xffff;
inline constexpr std::size_t segment_alignment = 16;  // alignof(std::max_align_t)
/// Longest body or segment a frame may announce (a forged length is refused before any sum).
inline constexpr std::uint64_t wire_length_max = std::uint64_t{1} << 40;

constexpr std::size_t align_up(std::size_t n, std::size_t a) noexcept { return (n + a - 1) / a * a; }

/// A growable byte buffer that does not zero what it grows into (the frames
/// overwrite it at once).
class wire_buffer {
 public:
  std::byte* data() noexcept { return data_.get(); }
  const std::byte* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  void clear() noexcept { size_ = 0; }
  /// Appends n uninitialized bytes; returns where they start.
  std::byte* grow(std::size_t n) {
    if (size_ + n > cap_) [[unlikely]]
      reserve_for(n);
    std::byte* at = data_.get() + size_;
    size_ += n;
    return at;
  }

 private:
  void reserve_for(std::size_t n);  // room for n more bytes

  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0, cap_ = 0;
};

/// How one message goes on the wire.
struct frame_plan {
  bool compact = false;     // 3-byte prefix; no segments
  bool flatten = false;     // the bulk segments travel inside the frame
  bool long_body = false;   // the body length follows the prefix
  bool body_apart = false;  // the body travels apart, ahead of the segments
  std::size_t most_bytes = 0;  // the frame's length at most, whatever its alignment
};

/// Whether `m` travels as a compact frame (3-byte prefix; no segments, a
/// short body, a low handler id): most remote calls and their replies.
inline bool fits_compact(const am_message& m) noexcept {
  return m.bulk_count() == 0 && m.body_bytes().size() <= compact_body_max &&
         static_cast<unsigned>(m.handler) <= compact_handler_max;
}

/// Lays out `m`: segments are flattened when the whole frame stays within
/// `eager_limit`; a body is sent apart when the frame would not fit in a
/// receive of `recv_size` bytes.
frame_plan plan_frame(const am_message& m, std::size_t eager_limit, std::size_t recv_size) noexcept;

/// Appends `m`'s frame as `plan` says (from plan_frame with the same `m`).
/// Segments and a body that travel apart are not copied: only their lengths.
void write_frame(wire_buffer& out, const am_message& m, const frame_plan& plan);

/// Appends `m`'s compact frame (fits_compact(m)); write_frame's compact case.
inline void write_compact_frame(wire_buffer& out, const am_message& m) {
  const auto header = m.header_bytes();
  const auto body = m.body_bytes();
  const wire_compact_prefix pre{static_cast<std::uint8_t>(wire_compact_magic | static_cast<unsigned>(m.handler)),
                                static_cast<std::uint8_t>(header.size()), static_cast<std::uint8_t>(body.size())};
  std::byte* w = out.grow(sizeof pre + header.size() + body.size());
  std::memcpy(w, &pre, sizeof pre);
  if (body.data() == header.data() + header.size()) {  // an inline body follows its header: one copy
    std::memcpy(w + sizeof pre, header.data(), header.size() + body.size());
    return;
  }
  if (!header.empty()) std::memcpy(w + sizeof pre, header.data(), header.size());
  if (!body.empty()) std::memcpy(w + sizeof pre + header.size(), body.data(), body.size());
}

/// A compact frame as read (offsets into its message).
struct compact_frame {
  std::uint8_t handler = 0;
  std::size_t header_at = 0, header_len = 0, body_at = 0, body_len = 0;
};

/// Reads the frame at `at` if it is a well-formed compact one (moving `at`
/// past it), without read_frame's general path; false: anything else
/// (another kind of frame, or bytes read_frame refuses), for read_frame.
inline bool read_compact_frame(std::span<const std::byte> message, std::size_t& at, compact_frame& f) noexcept {
  const std::size_t size = message.size();
  if (at >= size || size - at < sizeof(wire_compact_prefix)) return false;
  wire_compact_prefix cp;
  std::memcpy(&cp, message.data() + at, sizeof cp);
  if ((cp.tag & wire_compact_mask) != wire_compact_magic || cp.header_len > am_header_capacity) return false;
  const std::size_t header_at = at + sizeof cp;
  if (std::size_t{cp.header_len} + cp.body_len > size - header_at) return false;
  f.handler = static_cast<std::uint8_t>(cp.tag & ~wire_compact_mask);
  f.header_at = header_at;
  f.header_len = cp.header_len;
  f.body_at = header_at + cp.header_len;
  f.body_len = cp.body_len;
  at = f.body_at + cp.body_len;
  return true;
}

/// One frame as read, by offsets into the message it was read from (they
/// stay valid in a copy of that message).
struct frame_fields {
  std::uint8_t handler = 0;
  std::size_t header_at = 0;
  std::size_t header_len = 0;
  std::uint64_t body_len = 0;
  std::size_t body_at = 0;  // unless body_apart
  bool body_apart = false;
  bool flattened = false;
  std::vector<std::uint64_t> bulk_lens;
  std::vector<std::size_t> bulk_at;  // flattened: where each segment starts
};

/// Reads the frame that starts at `at` in `message` into `f` and moves `at`
/// past it. Returns null, or why the bytes are not a frame (truncated,
/// corrupt or forged); then `at` and `f` mean nothing.
const char* read_frame(std::span<const std::byte> message, std::size_t& at, frame_fields& f);

}  // namespace weft::detail
