// put and get: by memmove when the target heap is mapped here; else by the
// transport's one-sided put or get followed by a flush of the target, when
// it has them (complete at return, no handler of the target runs); else as
// rma messages into the target's heap segment.
#include <cstring>
#include <memory>
#include <stdexcept>

#include "pgas/one_sided_heap.hpp"
#include "pgas/state.hpp"
#include "pgas/transfer_at_once.hpp"
#include "rma/operations.hpp"
#include "weft/pgas.hpp"

namespace weft::detail::pgas {

using namespace weft::pgas::detail;

namespace {

/// Counts a message-path operation in the rank's in-flight set until it
/// completes; `keep` lives as long.
future<void> tracked(future<void>&& f, op_counter& c, std::shared_ptr<void> keep = {}) {
  c.started();
  return f.then([&c, keep = std::move(keep)](future<void> done) {
    done.get();
    c.finished();
  });
}

weft::rma::detail::transfer heap_transfer(int rank, std::uint64_t offset, std::size_t bytes) {
  return {rank, weft::rma::detail::segment_table::heap_id, static_cast<std::size_t>(offset), bytes};
}

}  // namespace

bool put_bytes_at_once(int rank, std::uint64_t offset, const void* src, std::size_t bytes) {
  if (std::byte* d = checked_address("put", rank, offset, bytes)) {
    if (bytes != 0) std::memmove(d, src, bytes);
    return true;
  }
  if (const one_sided_heap h = my_heap_one_sided(); h.ops != nullptr) {
    if (bytes != 0) {
      h.ops->put(rank, h.key, static_cast<std::size_t>(offset), src, bytes);
      h.ops->flush(rank);  // remote completion: what the future promises
      count_one_sided(2);
    }
    return true;
  }
  return false;
}

future<void> put_bytes_by_message(int rank, std::uint64_t offset, const void* src, std::size_t bytes,
                                  bool copy_source) {
  rank_comm& comm = weft::pgas::detail::current_comm();
  std::shared_ptr<std::byte[]> copy;
  if (copy_source && bytes != 0) {
    copy.reset(new std::byte[bytes]);
    std::memcpy(copy.get(), src, bytes);
    src = copy.get();
  }
  auto& origin = weft::rma::detail::state_of(comm);
  future<void> f = weft::rma::detail::send_put(origin, heap_transfer(rank, offset, bytes),
                                               static_cast<const std::byte*>(src), {}, {});
  return tracked(std::move(f), current().in_flight[static_cast<int>(kind::put)], std::move(copy));
}

future<void> put_bytes(int rank, std::uint64_t offset, const void* src, std::size_t bytes, bool copy_source) {
  if (src == nullptr && bytes != 0) throw std::invalid_argument("weft::put: null source buffer");
  if (put_bytes_at_once(rank, offset, src, bytes)) return make_ready_future();
  return put_bytes_by_message(rank, offset, src, bytes, copy_source);
}

bool get_bytes_at_once(int rank, std::uint64_t offset, void* dst, std::size_t bytes) {
  if (const std::byte* s = checked_address("get", rank, offset, bytes)) {
    if (bytes != 0) std::memmove(dst, s, bytes);
    return true;
  }
  if (const one_sided_heap h = my_heap_one_sided(); h.ops != nullptr) {
    if (bytes != 0) {
      h.ops->get(rank, h.key, static_cast<std::size_t>(offset), dst, bytes);
      h.ops->flush(rank);
      count_one_sided(2);
    }
    return true;
  }
  return false;
}

future<void> get_bytes_by_message(int rank, std::uint64_t offset, void* dst, std::size_t bytes) {
  auto& origin = weft::rma::detail::state_of(weft::pgas::detail::current_comm());
  future<void> f =
      weft::rma::detail::send_get(origin, heap_transfer(rank, offset, bytes), static_cast<std::byte*>(dst), {});
  return tracked(std::move(f), current().in_flight[static_cast<int>(kind::get)]);
}

future<void> get_bytes(int rank, std::uint64_t offset, void* dst, std::size_t bytes) {
  if (dst == nullptr && bytes != 0) throw std::invalid_argument("weft::get: null destination buffer");
  if (get_bytes_at_once(rank, offset, dst, bytes)) return make_ready_future();
  return get_bytes_by_message(rank, offset, dst, bytes);
}

void cache_release_for(const char* what);  // checkout.cpp

future<void> quiet(kind k) { return current().in_flight[static_cast<int>(k)].idle(); }

}  // namespace weft::detail::pgas

namespace weft {

void wait_puts() { detail::pgas::quiet(detail::pgas::kind::put).get(); }
void wait_gets() { detail::pgas::quiet(detail::pgas::kind::get).get(); }
void wait_atomics() { detail::pgas::quiet(detail::pgas::kind::atomic).get(); }
void fence() {
  detail::pgas::cache_release_for("fence");  // a release: cached writes go back too
  wait_puts();
  wait_gets();
  wait_atomics();
}

}  // namespace weft
