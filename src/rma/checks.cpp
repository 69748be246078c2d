#include "rma/checks.hpp"

#include <cstdio>
#include <cstdlib>

#include "am/rank_comm.hpp"
#include "rma/range_text.hpp"

namespace weft::rma::detail {

namespace {

[[noreturn]] void fail(const char* msg) noexcept {
  weft::detail::fatal_handler(msg);
  std::abort();
}

/// "rma put from rank 0 to rank 1, segment 3, bytes [64, 128)"
int describe(char* buf, std::size_t n, const access& a) {
  char range[80];
  format_range(range, sizeof range, a.offset, a.bytes);
  return std::snprintf(buf, n, "rma %s from rank %d to rank %d, segment %u, bytes %s", a.op, a.origin, a.target,
                       static_cast<unsigned>(a.segment), range);
}

/// Ends the job: "<the access>: <why>". Only failing checks format
/// anything; passing ones are a few compares.
[[noreturn]] void refuse(const access& a, const char* why) noexcept {
  char what[192];
  describe(what, sizeof what, a);
  char msg[448];
  std::snprintf(msg, sizeof msg, "%s: %s", what, why);
  fail(msg);
}

}  // namespace

const segment_entry& check_access(const segment_table& t, const access& a) noexcept {
  char why[256];
  const segment_entry* e = t.find(a.segment);
  if (e == nullptr) [[unlikely]] {
    std::snprintf(why, sizeof why, "rank %d has no segment %u (%u registered there)", a.target,
                  static_cast<unsigned>(a.segment), static_cast<unsigned>(t.count()));
    refuse(a, why);
  }
  if (e->state.load(std::memory_order_acquire) != segment_entry::live) [[unlikely]] {
    std::snprintf(why, sizeof why, "segment %u was deregistered on rank %d", static_cast<unsigned>(a.segment),
                  a.target);
    refuse(a, why);
  }
  // Written so that nothing wraps: offset + bytes may exceed 2^64 - 1.
  if (a.offset > e->size || a.bytes > e->size - a.offset) [[unlikely]] {
    std::snprintf(why, sizeof why, "out of bounds, segment %u on rank %d has %zu bytes",
                  static_cast<unsigned>(a.segment), a.target, e->size);
    refuse(a, why);
  }
  if (a.notify && e->arrivals == nullptr) [[unlikely]] {
    std::snprintf(why, sizeof why,
                  "segment %u on rank %d has no arrivals queue for the notification (pass one to register_memory)",
                  static_cast<unsigned>(a.segment), a.target);
    refuse(a, why);
  }
  return *e;
}

void check_request(int nranks, const access& a) noexcept {
  if (a.target < 0 || a.target >= nranks) [[unlikely]] {
    char why[96];
    std::snprintf(why, sizeof why, "rank %d does not exist (%d ranks)", a.target, nranks);
    refuse(a, why);
  }
  if (range_wraps(a.offset, a.bytes)) [[unlikely]]
    refuse(a, "out of bounds, offset + size exceeds 2^64 - 1");
}

void corrupt_message(int source, const char* why) noexcept {
  char msg[256];
  std::snprintf(msg, sizeof msg, "malformed rma message from rank %d: %s", source, why);
  fail(msg);
}

}  // namespace weft::rma::detail
