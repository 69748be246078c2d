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
// Each rank's segment is a POSIX shared-memory object of its own
// (/dev/shm/weft-<job>-<world rank>), holding the rings it reads from, so
// its reads are local; the others map it by name. Every rank creates its
// own, all wait for each other, map their peers', wait again, and unlink
// their own: once set up, nothing is left in /dev/shm, even if a rank
// crashes. Two barriers over the job's communicator cost far less than a
// node communicator and MPI_Win_allocate_shared, whose collective steps
// each wait for a busy-polling peer to get a core on an oversubscribed
// node (docs/CLUSTER.md, "Start-up time").
// Constructing is collective over that communicator; destroying is local.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "sched/sleep_slot.hpp"

namespace weft::detail {

/// The name of the segment of `rank` in job `job` (under /dev/shm).
std::string node_rings_segment_name(std::uint64_t job, int rank);

class node_rings {
 public:
  /// Collective over `comm`: every rank of it calls this, with the ranks
  /// (of comm, ascending, itself included) on its own node, and the same
  /// `job` (a number no other job on these nodes uses: it names the
  /// segments). Each ring holds `capacity` bytes: a power of two, at least
  /// twice the longest record plus 16 (a record never waits for more than
  /// one other to be read). When a segment cannot be made or mapped (a
  /// full /dev/shm), every rank ends the process with status 1, the rank
  /// that failed saying why.
  node_rings(MPI_Comm comm, std::span<const int> node_ranks, std::uint64_t job, std::size_t capacity);
  ~node_rings();
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

  /// Maps `bytes` of the segment called `name`, creating it when `create`;
  /// null on failure, with `error` saying what failed.
  static void* map_segment(const std::string& name, std::size_t bytes, bool create, std::string& error) noexcept;

  std::vector<void*> segments_;  // mapped, by local rank (own included)
  std::size_t segment_bytes_ = 0;
  int me_ = 0, n_ = 1;
  std::size_t cap_ = 0;
  sleep_slot* own_slot_ = nullptr;
  std::vector<out_ring> out_;  // by local rank (own entry unused)
  std::vector<in_ring> in_;
};

}  // namespace weft::detail
