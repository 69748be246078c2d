// Gets through the message protocol: the origin's record of one get.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <span>

#include "rma/checks.hpp"
#include "rma/op_common.hpp"
#include "rma/racing_reads.hpp"

namespace weft::rma::detail {

namespace {

/// A get in flight: one request per piece, done when every reply is copied.
class get_op {
 public:
  get_op(rank_state& origin, const transfer& t, std::byte* dst, report_to to)
      : comm_(origin.comm),
        t_(t),
        dst_(dst),
        chunk_(origin.settings.chunk),
        pieces_(pieces_of(t.bytes, chunk_)),
        out_(to),
        racing_(racing_reads::active()),
        outstanding_(pieces_) {}

  future<void> start() {
    future<void> f = out_.get_future();  // before sending: the record may be gone right after
    const std::size_t n = pieces_, chunk = chunk_;
    const transfer t = t_;
    rank_comm& c = comm_;
    const std::uint64_t token = token_of(this);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t len = std::min(chunk, t.bytes - i * chunk);
      wire_header h{wire_kind::get_request, 0, 0, t.segment, t.offset + i * chunk, len, token};
      weft::detail::send_am(c, t.target, rma_messages, h);
    }
    return f;
  }

  /// In one process the reply's data is a view of the target's segment
  /// itself: a get started in a racing_reads scope copies it in one too.
  void copy(std::byte* to, std::span<const std::byte> data) const {
    if (racing_) {
      const racing_reads unrecorded;
      std::memmove(to, data.data(), data.size());  // dst may overlap the segment
    } else {
      std::memmove(to, data.data(), data.size());
    }
  }

  void replied(const am_message& m, const wire_header& h) noexcept {
    if (m.bulk_count() != 1) corrupt_message(m.source, "get reply without its data");
    const auto data = m.bulk_segment(0);
    const std::uint64_t at = h.offset - t_.offset;  // wraps (and fails below) if h.offset < offset
    if (h.offset < t_.offset || at % chunk_ != 0 || at >= std::max<std::size_t>(t_.bytes, 1) ||
        data.size() != std::min(chunk_, t_.bytes - static_cast<std::size_t>(at)))
      corrupt_message(m.source, "get reply does not match its request");
    if (!data.empty()) copy(dst_ + at, data);
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    out_.report(completion{completion_kind::get, t_.target, t_.segment, t_.offset, t_.bytes, 0});
    delete this;
  }

 private:
  rank_comm& comm_;
  const transfer t_;
  std::byte* const dst_;
  const std::size_t chunk_;
  const std::size_t pieces_;
  reporter out_;
  const bool racing_;  // started in a racing_reads scope
  std::atomic<std::size_t> outstanding_;  // replies to come
};

}  // namespace

future<void> send_get(rank_state& origin, const transfer& t, std::byte* dst, report_to to) {
  return (new get_op(origin, t, dst, to))->start();
}

void get_replied(const am_message& m, const wire_header& h) noexcept {
  reinterpret_cast<get_op*>(static_cast<std::uintptr_t>(h.token))->replied(m, h);
}

}  // namespace weft::rma::detail
