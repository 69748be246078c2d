// Internal: the rma protocol's active messages: their handler id and header.
//
//   put          origin -> target  bulk segment 0 = the data; flags say
//                                  whether to acknowledge and whether to
//                                  queue an arrival (then the body's inline
//                                  bytes hold the arrival's offset, length)
//   put_ack      target -> origin  the piece at `offset` is in place
//   get_request  origin -> target  send `arg` bytes at `offset`
//   get_reply    target -> origin  bulk segment 0 = those bytes, sent
//                                  straight from the segment
//
// `token` is the origin's operation record, echoed back untouched: replies
// always return to the process that sent the request.
#pragma once
#include <cstdint>

#include "am/rank_comm.hpp"
#include "weft/rma.hpp"

namespace weft::rma::detail {

/// The rma layer's message id, registered with am by rma_dispatch.cpp (its
/// definition is there so that every sender links the handler in).
extern const weft::detail::am_handler rma_messages;

enum class wire_kind : std::uint8_t { put = 1, put_ack = 2, get_request = 3, get_reply = 4 };

enum wire_flags : std::uint8_t {
  wire_want_ack = 1,  // put: reply with put_ack once the data is in place
  wire_notify = 2,    // put: queue an arrival in the segment's queue
};

struct wire_header {
  wire_kind kind;
  std::uint8_t flags;
  std::uint16_t unused;
  segment_id segment;
  std::uint64_t offset;  // byte offset in the target segment of this piece
  std::uint64_t arg;     // put: the notification tag; get_request: the length
  std::uint64_t token;   // origin's operation record
};
static_assert(sizeof(wire_header) == 32 && sizeof(wire_header) <= weft::detail::am_header_capacity);

/// Inline body of a notified put: what the arrival entry reports (the whole
/// put, which may have travelled in several pieces).
struct wire_notice {
  std::uint64_t offset;
  std::uint64_t bytes;
};

}  // namespace weft::rma::detail
