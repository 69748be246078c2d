// pgas messages arriving at a rank (pgas_messages, called from
// progress): atomics and lock requests served as the target or owner,
// replies delivered as the origin. Nothing here blocks.
#include <string>

#include "am/handlers.hpp"
#include "pgas/handlers.hpp"

namespace weft::detail {

void pgas_arrived(rank_comm& c, am_message&& m) {
  using namespace weft::pgas::detail;
  const auto h = am_header<wire_header>(m, "pgas");
  switch (h.kind) {
    case wire_kind::atomic_request:
      serve_atomic(c, m, h);
      break;
    case wire_kind::atomic_reply:
      atomic_replied(h);
      break;
    case wire_kind::lock_request:
      serve_lock_request(*in_process(c.rank), m.source, h.lock, h.token, (h.flags & wire_try) != 0);
      break;
    case wire_kind::lock_reply:
      lock_replied(h);
      break;
    case wire_kind::unlock:
      serve_unlock(*in_process(c.rank), m.source, h.lock);
      break;
    default:
      fail("malformed message from rank " + std::to_string(m.source) + " (unknown kind " +
           std::to_string(static_cast<unsigned>(h.kind)) + ")");
  }
}

const am_handler pgas_messages = register_am_handler(5, "pgas", &pgas_arrived);

}  // namespace weft::detail
