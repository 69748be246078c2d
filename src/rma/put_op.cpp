// Puts through the message protocol: the origin's record of one put.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "rma/op_common.hpp"

namespace weft::rma::detail {

namespace {

/// A put in flight. Events: each piece's release by the transport (local
/// completion of that piece) and each expected acknowledgement. A notified
/// put in several pieces holds its last piece back until the others are
/// acknowledged, so the target queues the arrival only once all the data is
/// in place, without keeping any state of its own.
class put_op {
 public:
  put_op(rank_state& origin, const transfer& t, const std::byte* src, const put_options& o, report_to to)
      : comm_(origin.comm),
        t_(t),
        src_(src != nullptr ? src : empty_source),
        chunk_(origin.settings.chunk),
        pieces_(pieces_of(t.bytes, chunk_)),
        level_(o.level),
        notify_(o.notify.has_value()),
        tag_(o.notify.value_or(0)),
        out_(to),
        unreleased_(pieces_),
        outstanding_(pieces_ + expected_acks()),
        early_acks_(holds_last() ? pieces_ - 1 : 0) {}

  future<void> start() {
    future<void> f = out_.get_future();  // before sending: the record may be gone right after
    const std::size_t first = holds_last() ? pieces_ - 1 : pieces_;
    for (std::size_t i = 0; i < first; ++i) send_piece(i);
    return f;
  }

  void acked(std::uint64_t piece_offset) noexcept {
    if (holds_last()) {
      const std::size_t i = static_cast<std::size_t>(piece_offset - t_.offset) / chunk_;
      if (i + 1 < pieces_ && early_acks_.fetch_sub(1, std::memory_order_acq_rel) == 1) send_piece(pieces_ - 1);
    }
    settle();
  }

  /// The transport released a piece's source view: it no longer reads src.
  void released() noexcept {
    if (unreleased_.fetch_sub(1, std::memory_order_acq_rel) == 1 && level_ == completion_level::local)
      out_.report(entry(completion_kind::put_local));
    settle();
  }

 private:
  /// Owned by the transport with each piece; dropping it is the release.
  struct piece_release {
    explicit piece_release(put_op* o) noexcept : op(o) {}
    piece_release(const piece_release&) = delete;  // exactly one release per piece
    piece_release& operator=(const piece_release&) = delete;
    ~piece_release() { op->released(); }
    put_op* op;
  };

  bool holds_last() const noexcept { return notify_ && pieces_ > 1; }
  bool wants_ack(std::size_t i) const noexcept {
    return level_ == completion_level::remote || (holds_last() && i + 1 < pieces_);
  }
  std::size_t expected_acks() const noexcept {
    if (level_ == completion_level::remote) return pieces_;
    return holds_last() ? pieces_ - 1 : 0;
  }
  completion entry(completion_kind k) const noexcept {
    return completion{k, t_.target, t_.segment, t_.offset, t_.bytes, 0};
  }

  void send_piece(std::size_t i) noexcept {
    const std::size_t at = i * chunk_;
    const std::size_t len = std::min(chunk_, t_.bytes - at);
    const bool last = i + 1 == pieces_;
    wire_header h{wire_kind::put, 0, 0, t_.segment, t_.offset + at, tag_, token_of(this)};
    if (wants_ack(i)) h.flags |= wire_want_ack;
    serialization::message body;
    if (notify_ && last) {
      h.flags |= wire_notify;
      const wire_notice n{t_.offset, t_.bytes};
      body.bytes.resize(sizeof n);
      std::memcpy(body.bytes.data(), &n, sizeof n);
    }
    body.bulk.emplace_back(src_ + at, len);
    auto keep = serialization::owner::adopt(std::make_unique<piece_release>(this));
    // Once sent, the record may be freed by another thread: nothing after this call touches it.
    weft::detail::send_am(comm_, t_.target, rma_messages, h, std::move(body), std::move(keep));
  }

  void settle() noexcept {
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (level_ == completion_level::remote) out_.report(entry(completion_kind::put_remote));
    delete this;
  }

  rank_comm& comm_;
  const transfer t_;
  const std::byte* const src_;
  const std::size_t chunk_;
  const std::size_t pieces_;
  const completion_level level_;
  const bool notify_;
  const std::uint64_t tag_;
  reporter out_;
  std::atomic<std::size_t> unreleased_;   // pieces the transport may still read
  std::atomic<std::size_t> outstanding_;  // releases + acks to come; 0 frees the record
  std::atomic<std::size_t> early_acks_;   // acks the held-back last piece waits for
};

}  // namespace

future<void> send_put(rank_state& origin, const transfer& t, const std::byte* src, const put_options& opts,
                      report_to to) {
  return (new put_op(origin, t, src, opts, to))->start();
}

void put_acked(const wire_header& h) noexcept {
  reinterpret_cast<put_op*>(static_cast<std::uintptr_t>(h.token))->acked(h.offset);
}

}  // namespace weft::rma::detail
