// Internal: the pgas layer's own messages (pgas_messages): atomics and
// the lock protocol. Puts and gets to ranks in other processes travel as rma
// messages into the heap's segment (rma::detail::segment_table::heap_id).
#pragma once
#include <cstdint>

#include "am/message.hpp"

namespace weft::detail {
/// The pgas layer's handler id (registered in pgas_dispatch.cpp).
extern const am_handler pgas_messages;
}  // namespace weft::detail

namespace weft::pgas::detail {

enum class wire_kind : std::uint8_t {
  atomic_request = 1,  // offset, type, op, operand; body: the second operand (compare-exchange)
  atomic_reply = 2,    // operand: the old value
  lock_request = 3,    // lock, flags (try?)
  lock_reply = 4,      // flags: granted?
  unlock = 5,          // lock
};

inline constexpr std::uint8_t wire_try = 1;
inline constexpr std::uint8_t wire_granted = 1;

struct wire_header {
  wire_kind kind;
  std::uint8_t type;   // atomic_type
  std::uint8_t op;     // atomic_op
  std::uint8_t flags;
  std::uint32_t lock;
  std::uint64_t offset;
  std::uint64_t operand;
  std::uint64_t token;  // the origin's record
};
static_assert(sizeof(wire_header) == 32);

}  // namespace weft::pgas::detail
