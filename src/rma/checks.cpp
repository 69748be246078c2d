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

}  // namespace

const segment_entry& check_access(const segment_table& t, const access& a) noexcept {
  char what[192];
  describe(what, sizeof what, a);
  char msg[448];
  const segment_entry* e = t.find(a.segment);
  if (e == nullptr) {
    std::snprintf(msg, sizeof msg, "%s: rank %d has no segment %u (%u registered there)", what, a.target,
                  static_cast<unsigned>(a.segment), static_cast<unsigned>(t.count()));
    fail(msg);
  }
  if (e->state.load(std::memory_order_acquire) != segment_entry::live) {
    std::snprintf(msg, sizeof msg, "%s: segment %u was deregistered on rank %d", what,
                  static_cast<unsigned>(a.segment), a.target);
    fail(msg);
  }
  if (a.offset > e->size || a.bytes > e->size - a.offset) {
    std::snprintf(msg, sizeof msg, "%s: out of bounds, segment %u on rank %d has %zu bytes", what,
                  static_cast<unsigned>(a.segment), a.target, e->size);
    fail(msg);
  }
  if (a.notify && e->arrivals == nullptr) {
    std::snprintf(msg, sizeof msg,
                  "%s: segment %u on rank %d has no arrivals queue for the notification "
                  "(pass one to register_memory)",
                  what, static_cast<unsigned>(a.segment), a.target);
    fail(msg);
  }
  return *e;
}

void check_request(int nranks, const access& a) noexcept {
  char what[192];
  char msg[320];
  if (a.target < 0 || a.target >= nranks) [[unlikely]] {
    describe(what, sizeof what, a);
    std::snprintf(msg, sizeof msg, "%s: rank %d does not exist (%d ranks)", what, a.target, nranks);
    fail(msg);
  }
  if (range_wraps(a.offset, a.bytes)) [[unlikely]] {
    describe(what, sizeof what, a);
    std::snprintf(msg, sizeof msg, "%s: out of bounds, offset + size exceeds 2^64 - 1", what);
    fail(msg);
  }
}

void corrupt_message(int source, const char* why) noexcept {
  char msg[256];
  std::snprintf(msg, sizeof msg, "malformed rma message from rank %d: %s", source, why);
  fail(msg);
}

}  // namespace weft::rma::detail
