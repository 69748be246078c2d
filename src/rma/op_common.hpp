// Internal: what the put and get records share — reporting to a future or a
// queue, and how a transfer is cut into pieces.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "rma/operations.hpp"

namespace weft::rma::detail {

/// The reporting half shared by puts and gets.
class reporter {
 public:
  explicit reporter(report_to to) : to_(to) {
    if (to_.cq == nullptr) promise_.emplace();
  }
  future<void> get_future() { return promise_ ? promise_->get_future() : future<void>{}; }
  void report(completion c) {
    if (to_.cq != nullptr) {
      c.context = to_.context;
      to_.cq->push(c);
    } else {
      promise_->set_value();
    }
  }

 private:
  report_to to_;
  std::optional<promise<void>> promise_;
};

/// A valid address for empty transfers (some code paths memcpy zero bytes,
/// which must not be given a null pointer).
inline const std::byte empty_source[1] = {};

/// Messages a transfer of `bytes` takes (an empty one still takes one: it
/// is checked, notified and completed like any other).
inline std::size_t pieces_of(std::size_t bytes, std::size_t chunk) {
  return bytes == 0 ? 1 : (bytes + chunk - 1) / chunk;
}

/// An origin record as it travels in `wire_header::token`.
inline std::uint64_t token_of(const void* p) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
}

}  // namespace weft::rma::detail
