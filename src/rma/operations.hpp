// Internal: puts and gets whose target is not on this rank's node (in
// another process, or, with --weft:node-size, in this one but another
// node), carried by active messages.
//
// Each call allocates one record on the origin. Its address travels as the
// `token` of the requests and comes back in the replies; the record counts
// the events still to come and frees itself after the last one, so nothing
// fires after the record is gone and nothing is dropped before it reports.
#pragma once
#include <cstddef>
#include <cstdint>

#include "rma/rank_state.hpp"
#include "rma/wire.hpp"

namespace weft::rma::detail {

/// Where an operation reports: a future, or an entry in a queue.
struct report_to {
  completion_queue* cq = nullptr;  // null: the future form
  std::uint64_t context = 0;
};

struct transfer {
  int target;
  segment_id segment;
  std::size_t offset;
  std::size_t bytes;
};

/// Starts a put of src[0, t.bytes) into the target. Returns the future of
/// the requested completion (empty when `to.cq` is set).
future<void> send_put(rank_state& origin, const transfer& t, const std::byte* src, const put_options& opts,
                      report_to to);

/// Starts a get of the target's bytes into dst[0, t.bytes).
future<void> send_get(rank_state& origin, const transfer& t, std::byte* dst, report_to to);

/// Reply handlers (run in progress on the origin).
void put_acked(const wire_header& h) noexcept;
void get_replied(const am_message& m, const wire_header& h) noexcept;

}  // namespace weft::rma::detail
