// rma messages arriving at a rank (rma_messages, called from progress):
// requests served as the target, replies delivered as the origin. Nothing
// here blocks; the target copies a put's data into the segment, or answers a
// get with a view of the segment itself (sent without copying when large).
#include <cstring>

#include "rma/checks.hpp"
#include "rma/operations.hpp"
#include "rma/rank_state.hpp"
#include "rma/wire.hpp"

namespace weft::rma::detail {

namespace {

void serve_put(rank_comm& c, am_message& m, const wire_header& h) {
  if (m.bulk_count() != 1) corrupt_message(m.source, "put without its data");
  const auto data = m.bulk_segment(0);
  const bool notify = (h.flags & wire_notify) != 0;
  const access a{notify ? "notified put" : "put", m.source, c.rank, h.segment, h.offset, data.size(), notify};
  const segment_entry& e = check_access(state_of(c).segments, a);
  // memmove: in one process the data is a view of the source, which may
  // overlap the destination (a put from a segment into itself).
  if (!data.empty()) std::memmove(e.base + h.offset, data.data(), data.size());
  if (notify) {
    wire_notice n;
    serialization::reader in = m.reader();
    if (in.remaining() != sizeof n) corrupt_message(m.source, "notified put without its notice");
    in.read_bytes(&n, sizeof n);
    // Queued before the acknowledgement leaves: when the origin sees remote
    // completion, the target's entry is already there.
    e.arrivals->push(completion{completion_kind::arrival, m.source, h.segment, n.offset, n.bytes, h.arg});
  }
  if ((h.flags & wire_want_ack) != 0)
    weft::detail::send_am(c, m.source, rma_messages,
                          wire_header{wire_kind::put_ack, 0, 0, h.segment, h.offset, 0, h.token});
}

void serve_get(rank_comm& c, const am_message& m, const wire_header& h) {
  const access a{"get", m.source, c.rank, h.segment, h.offset, static_cast<std::size_t>(h.arg)};
  const segment_entry& e = check_access(state_of(c).segments, a);
  // The reply points into the segment itself: registered memory stays valid
  // (the owner must not deregister it with operations in flight), so no
  // copy and no `keep` are needed on this side.
  serialization::message body;
  body.bulk.emplace_back(e.base + h.offset, static_cast<std::size_t>(h.arg));
  weft::detail::send_am(c, m.source, rma_messages,
                        wire_header{wire_kind::get_reply, 0, 0, h.segment, h.offset, h.arg, h.token},
                        std::move(body));
}

void rma_arrived(rank_comm& c, am_message&& m) {
  const auto h = am_header<wire_header>(m, "rma");
  switch (h.kind) {
    case wire_kind::put:
      serve_put(c, m, h);
      break;
    case wire_kind::put_ack:
      put_acked(h);
      break;
    case wire_kind::get_request:
      serve_get(c, m, h);
      break;
    case wire_kind::get_reply:
      get_replied(m, h);
      break;
    default:
      corrupt_message(m.source, "unknown rma message kind");
  }
}

}  // namespace

const am_handler rma_messages = weft::detail::register_am_handler(4, "rma", &rma_arrived);

}  // namespace weft::rma::detail
