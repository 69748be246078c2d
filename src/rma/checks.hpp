// Internal: the access checks every put and get passes, and the fatal
// errors they raise. The same check runs on the origin when the target is
// in this process and on the target otherwise, so the message is the same
// on both backends; only the rank that prints it differs.
#pragma once
#include <cstddef>

#include "rma/segment_table.hpp"

namespace weft::rma::detail {

/// What an access is, for messages ("put", "notified put", "get").
struct access {
  const char* op;
  int origin;
  int target;
  segment_id segment;
  std::size_t offset;
  std::size_t bytes;
  bool notify = false;
};

/// The live entry `a` may use, after checking the segment exists, is live,
/// holds [offset, offset + bytes) and (for a notified put) has an arrivals
/// queue; otherwise ends the job with a message naming all of it.
const segment_entry& check_access(const segment_table& t, const access& a) noexcept;

/// What the origin checks before choosing a path, without the target's
/// segment table: ends the job if `a.target` is not a rank, or if
/// [offset, offset + bytes) ends past 2^64 - 1. The latter matters because a
/// transfer sent in pieces computes each piece's offset by adding to the
/// first, which must not wrap back into the segment.
void check_request(int nranks, const access& a) noexcept;

/// Ends the job: a malformed rma message from `source`.
[[noreturn]] void corrupt_message(int source, const char* why) noexcept;

}  // namespace weft::rma::detail
