#include "am/mpi/node_rings.hpp"

#include <atomic>
#include <cstring>
#include <new>

namespace weft::detail {

namespace {

constexpr std::uint64_t wrap_marker = ~std::uint64_t{0};  // "continue at the ring's start"
constexpr std::size_t record_prefix = 8;                  // the record's length, a std::uint64_t

constexpr std::uint64_t align8(std::uint64_t n) noexcept { return (n + 7) & ~std::uint64_t{7}; }

}  // namespace

/// At the start of each ring; the data follows. Head and tail on lines of
/// their own: the writer's stores to one do not evict the reader's copy of
/// the other. Both count bytes since the start and never wrap.
struct node_rings::ring_header {
  alignas(64) std::atomic<std::uint64_t> tail{0};  // written by the producer
  alignas(64) std::atomic<std::uint64_t> head{0};  // written by the consumer
};
static_assert(sizeof(std::atomic<std::uint64_t>) == 8 && std::atomic<std::uint64_t>::is_always_lock_free,
              "the rings are shared between processes: their counters must be lock-free");

node_rings::node_rings(MPI_Comm node, std::size_t capacity) : cap_(capacity) {
  MPI_Comm_dup(node, &node_);
  MPI_Comm_rank(node_, &me_);
  MPI_Comm_size(node_, &n_);
  const std::size_t stride = sizeof(ring_header) + cap_;
  const auto mine = static_cast<MPI_Aint>(sizeof(sleep_slot) + stride * static_cast<std::size_t>(n_ - 1));
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each rank's rings in its own pages
  void* base = nullptr;
  MPI_Win_allocate_shared(mine, 1, info, node_, &base, &win_);
  MPI_Info_free(&info);
  // The sleep slot, then the rings this rank reads, empty; the barrier
  // publishes that.
  own_slot_ = new (base) sleep_slot;
  auto* rings = static_cast<std::byte*>(base) + sizeof(sleep_slot);
  for (int p = 0; p < n_ - 1; ++p) new (rings + stride * static_cast<std::size_t>(p)) ring_header;
  MPI_Barrier(node_);
  out_.resize(static_cast<std::size_t>(n_));
  in_.resize(static_cast<std::size_t>(n_));
  for (int peer = 0; peer < n_; ++peer) {
    if (peer == me_) continue;
    MPI_Aint size = 0;
    int unit = 0;
    void* theirs = nullptr;
    MPI_Win_shared_query(win_, peer, &size, &unit, &theirs);
    auto* out = static_cast<std::byte*>(theirs) + sizeof(sleep_slot) + stride * static_cast<std::size_t>(slot(peer, me_));
    auto* in = rings + stride * static_cast<std::size_t>(slot(me_, peer));
    out_[static_cast<std::size_t>(peer)] =
        out_ring{reinterpret_cast<ring_header*>(out), static_cast<sleep_slot*>(theirs), out + sizeof(ring_header)};
    in_[static_cast<std::size_t>(peer)] = in_ring{reinterpret_cast<ring_header*>(in), in + sizeof(ring_header)};
  }
}

node_rings::~node_rings() {
  MPI_Win_free(&win_);
  MPI_Comm_free(&node_);
}

bool node_rings::try_write(int to, const std::byte* bytes, std::size_t n) noexcept {
  out_ring& r = out_[static_cast<std::size_t>(to)];
  const std::uint64_t need = record_prefix + align8(n);
  std::uint64_t t = r.tail;
  std::uint64_t at = t & (cap_ - 1);
  // A record is contiguous: one that would run past the end starts over
  // at the beginning, after a marker (the rest of the ring is skipped).
  const std::uint64_t skip = at + need > cap_ ? cap_ - at : 0;
  if (t + skip + need - r.head_seen > cap_) {
    r.head_seen = r.h->head.load(std::memory_order_acquire);
    if (t + skip + need - r.head_seen > cap_) return false;
  }
  if (skip != 0) {
    std::memcpy(r.data + at, &wrap_marker, sizeof wrap_marker);
    t += skip;
    at = 0;
  }
  const std::uint64_t len = n;
  std::memcpy(r.data + at, &len, sizeof len);
  std::memcpy(r.data + at + record_prefix, bytes, n);
  r.tail = t + need;
  r.h->tail.store(r.tail, std::memory_order_release);  // the bytes above become the reader's
  wake_shared_sleeper(*r.reader);
  return true;
}

std::span<const std::byte> node_rings::peek(int from, bool& corrupt) noexcept {
  in_ring& r = in_[static_cast<std::size_t>(from)];
  if (r.head == r.tail_seen) {
    r.tail_seen = r.h->tail.load(std::memory_order_acquire);
    if (r.head == r.tail_seen) return {};
  }
  std::uint64_t at = r.head & (cap_ - 1);
  std::uint64_t len = 0;
  std::memcpy(&len, r.data + at, sizeof len);
  if (len == wrap_marker) {
    r.head += cap_ - at;
    at = 0;
    std::memcpy(&len, r.data, sizeof len);
  }
  if (len > cap_ - record_prefix || r.head + record_prefix + align8(len) > r.tail_seen) {
    corrupt = true;
    return {};
  }
  r.taken = record_prefix + align8(len);
  return {r.data + at + record_prefix, static_cast<std::size_t>(len)};
}

void node_rings::pop(int from) noexcept {
  in_ring& r = in_[static_cast<std::size_t>(from)];
  r.head += r.taken;
  r.taken = 0;
  r.h->head.store(r.head, std::memory_order_release);  // the writer may reuse the bytes
}

}  // namespace weft::detail
