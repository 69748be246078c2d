// Internal: one active message as the remote-call and collective layers see
// it. In-process (smp) it travels by move, so large arguments are never
// copied; over MPI it is flattened into one buffer and rebuilt on arrival.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "weft/detail/serialize.hpp"

namespace weft::detail {

enum class am_handler : std::uint32_t { call = 1, reply = 2, collective = 3, rma = 4 };

struct am_message {
  int source = -1;
  am_handler handler = am_handler::call;
  std::vector<std::byte> header;             // the protocol header of `handler`
  serialization::message body;               // inline bytes + zero-copy views
  std::vector<std::vector<std::byte>> owned_bulk;  // bulk segments received into buffers
  serialization::owner keep;                 // what `body.bulk` points into (sender side)

  /// Bulk segment i of the body, whichever way it arrived.
  std::size_t bulk_count() const noexcept { return owned_bulk.empty() ? body.bulk.size() : owned_bulk.size(); }
  std::span<const std::byte> bulk_segment(std::size_t i) const noexcept {
    if (!owned_bulk.empty()) return owned_bulk[i];
    return body.bulk[i];
  }

  /// A reader over the body, whichever way the bulk segments arrived.
  serialization::reader reader() {
    if (!owned_bulk.empty()) return serialization::reader(body.bytes, owned_bulk);
    return serialization::reader(body.bytes, body.bulk);
  }
};

/// Delivery of a message on its destination rank (called from progress).
using am_dispatch_fn = void (*)(void* rank_ctx, am_message&& m);

/// What a backend offers the layers above (one object per local rank).
class am_transport {
 public:
  virtual ~am_transport() = default;
  /// Sends `m` to `dest` (m.source is filled in). Thread-safe; never blocks
  /// on the receiver. The transport owns `m` until it is delivered or its
  /// contents are sent (that is when `m.keep` is released).
  virtual void send(int dest, am_message&& m) = 0;
  /// Delivers pending incoming messages to the dispatcher; true if any.
  /// Thread-safe (concurrent callers return at once).
  virtual bool progress() = 0;
};

}  // namespace weft::detail
