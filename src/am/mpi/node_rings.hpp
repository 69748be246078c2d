// Internal: byte rings between the ranks of one node, in MPI shared memory.
//
// The mpi backend sends the frames for a rank on its own node through one
// of these instead of MPI_Isend (mpi_transport::start_send): the sender
// copies the bytes into the ring, the receiver's progress pass reads them
// where they lie. One ring per ordered pair of ranks, single producer (the
// sending rank's progress-lock holder) and single consumer (the receiving
// rank's), so the only synchronization is one release store of the
// producer's tail and one of the consumer's head — the design's "lock-free
// shared-memory ring" floor, and what GASNet-EX's PSHM (under DiOMP) and
// MPICH's own shared-memory transport do for ranks that share a node.
// Matching, request objects and their completion, which MPI needs for any
// message, are not needed here: an eager frame is complete once copied.
//
// Each rank's segment starts with the sleep slot its idle workers sleep in
// (sched/sleep_slot.hpp): a writer wakes the reader's sleepers there after
// each record, so a message to a rank whose workers sleep is handled at
// once, not when their nap ends.
//
// The memory comes from MPI_Win_allocate_shared over the node's ranks (each
// rank holds the rings it reads from, so its reads are local), found by the
// others with MPI_Win_shared_query. Constructing and destroying are
// collective over the node.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

#include "sched/sleep_slot.hpp"

namespace weft::detail {

class node_rings {
 public:
  /// Collective over `node`. Each ring holds `capacity` bytes: a power of
  /// two, at least twice the longest record plus 16 (a record never waits
  /// for more than one other to be read).
  node_rings(MPI_Comm node, std::size_t capacity);
  ~node_rings();  // collective over the node
  node_rings(const node_rings&) = delete;
  node_rings& operator=(const node_rings&) = delete;

  int local_rank() const noexcept { return me_; }
  int local_size() const noexcept { return n_; }

  /// Appends one record of n bytes to the ring read by local rank `to`;
  /// false (nothing written) when the ring has no room for it now.
  bool try_write(int to, const std::byte* data, std::size_t n) noexcept;
  /// Where this rank's idle workers sleep so that writers wake them.
  sleep_slot& own_sleep_slot() noexcept { return *own_slot_; }
  /// The oldest unread record from local rank `from`, or an empty span.
  /// Sets `corrupt` when the ring holds a length that cannot be.
  std::span<const std::byte> peek(int from, bool& corrupt) noexcept;
  /// Releases the record peek(from) returned to the writer.
  void pop(int from) noexcept;

 private:
  struct ring_header;
  struct out_ring {  // this rank writes, the peer reads
    ring_header* h = nullptr;
    sleep_slot* reader = nullptr;   // where the peer's workers sleep
    std::byte* data = nullptr;
    std::uint64_t tail = 0;         // our copy of h->tail
    std::uint64_t head_seen = 0;    // h->head when last read (room is rechecked only when short)
  };
  struct in_ring {  // the peer writes, this rank reads
    ring_header* h = nullptr;
    std::byte* data = nullptr;
    std::uint64_t head = 0;       // our copy of h->head
    std::uint64_t tail_seen = 0;  // h->tail when last read
    std::uint64_t taken = 0;      // bytes of the record peek returned
  };
  /// Index of `peer`'s ring inside the segment of rank `owner` (no ring to self).
  static int slot(int owner, int peer) noexcept { return peer < owner ? peer : peer - 1; }

  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int me_ = 0, n_ = 1;
  std::size_t cap_ = 0;
  sleep_slot* own_slot_ = nullptr;
  std::vector<out_ring> out_;  // by local rank (own entry unused)
  std::vector<in_ring> in_;
};

}  // namespace weft::detail
