// The public calls. A target in this process that the transport puts on
// this rank's node (an smp rank, or this rank itself; with
// --weft:node-size=1 only itself) is reached directly: check, copy, report
// — local and remote completion at once, on the calling thread. Any other
// target goes through the message protocol (put_op.cpp, get_op.cpp), also
// one in this process on another node.
#include <cstring>
#include <stdexcept>
#include <string>

#include "rma/checks.hpp"
#include "rma/operations.hpp"
#include "rma/rank_state.hpp"

namespace weft::rma {

using detail::access;
using detail::rank_state;
using detail::report_to;
using detail::transfer;

namespace {

/// The target's context when it is reached directly, else nullptr.
detail::rank_comm* direct_target(const rank_state& origin, int target) noexcept {
  detail::rank_comm* t = detail::in_process_comm(target);
  return t != nullptr && origin.comm.transport->same_node(target) ? t : nullptr;
}

future<void> finished(report_to to, const completion& c) {
  if (to.cq == nullptr) return make_ready_future();
  completion e = c;
  e.context = to.context;
  to.cq->push(e);
  return {};
}

future<void> start_put(int target, segment_id seg, std::size_t offset, const void* src, std::size_t bytes,
                       const put_options& opts, report_to to) {
  if (src == nullptr && bytes != 0) throw std::invalid_argument("weft::rma::put: null source buffer");
  auto& comm = weft::detail::current_comm();
  rank_state& me = detail::state_of(comm);
  const bool notify = opts.notify.has_value();
  const access a{notify ? "notified put" : "put", comm.rank, target, seg, offset, bytes, notify};
  detail::check_request(comm.nranks, a);
  if (detail::rank_comm* t = direct_target(me, target)) {
    const detail::segment_entry& e = detail::check_access(detail::state_of(*t).segments, a);
    if (bytes != 0) std::memmove(e.base + offset, src, bytes);
    if (notify) e.arrivals->push(completion{completion_kind::arrival, comm.rank, seg, offset, bytes, *opts.notify});
    const auto kind = opts.level == completion_level::local ? completion_kind::put_local : completion_kind::put_remote;
    return finished(to, completion{kind, target, seg, offset, bytes, 0});
  }
  return detail::send_put(me, transfer{target, seg, offset, bytes}, static_cast<const std::byte*>(src), opts, to);
}

future<void> start_get(int target, segment_id seg, std::size_t offset, void* dst, std::size_t bytes, report_to to) {
  if (dst == nullptr && bytes != 0) throw std::invalid_argument("weft::rma::get: null destination buffer");
  auto& comm = weft::detail::current_comm();
  rank_state& me = detail::state_of(comm);
  const access a{"get", comm.rank, target, seg, offset, bytes};
  detail::check_request(comm.nranks, a);
  if (detail::rank_comm* t = direct_target(me, target)) {
    const detail::segment_entry& e = detail::check_access(detail::state_of(*t).segments, a);
    if (bytes != 0) std::memmove(dst, e.base + offset, bytes);
    return finished(to, completion{completion_kind::get, target, seg, offset, bytes, 0});
  }
  return detail::send_get(me, transfer{target, seg, offset, bytes}, static_cast<std::byte*>(dst), to);
}

}  // namespace

segment register_memory(void* base, std::size_t bytes, completion_queue* arrivals) {
  if (base == nullptr || bytes == 0)
    throw std::invalid_argument("weft::rma::register_memory: null base or zero size");
  auto& comm = weft::detail::current_comm();
  const segment_id id = detail::state_of(comm).segments.add(static_cast<std::byte*>(base), bytes, arrivals);
  return segment(id, base, bytes, comm.rank);
}

void deregister(segment& s) {
  if (!s.valid()) throw std::invalid_argument("weft::rma::deregister: empty segment handle");
  auto& comm = weft::detail::current_comm();
  if (s.rank() != comm.rank)
    throw std::invalid_argument("weft::rma::deregister: segment " + std::to_string(s.id()) +
                                " was registered on rank " + std::to_string(s.rank()) + ", not on rank " +
                                std::to_string(comm.rank));
  if (!detail::state_of(comm).segments.remove(s.id()))
    throw std::invalid_argument("weft::rma::deregister: segment " + std::to_string(s.id()) +
                                " is already deregistered");
  s = segment{};
}

future<void> put(int rank, segment_id seg, std::size_t offset, const void* src, std::size_t bytes,
                 put_options opts) {
  return start_put(rank, seg, offset, src, bytes, opts, report_to{});
}

void put(int rank, segment_id seg, std::size_t offset, const void* src, std::size_t bytes, completion_queue& cq,
         std::uint64_t context, put_options opts) {
  start_put(rank, seg, offset, src, bytes, opts, report_to{&cq, context});
}

future<void> get(int rank, segment_id seg, std::size_t offset, void* dst, std::size_t bytes) {
  return start_get(rank, seg, offset, dst, bytes, report_to{});
}

void get(int rank, segment_id seg, std::size_t offset, void* dst, std::size_t bytes, completion_queue& cq,
         std::uint64_t context) {
  start_get(rank, seg, offset, dst, bytes, report_to{&cq, context});
}

}  // namespace weft::rma
