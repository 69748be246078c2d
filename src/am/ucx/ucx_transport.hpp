// Internal: the transport of the ucx backend (one rank per process, started
// by mpiexec or srun like the mpi backend; --weft:backend=ucx).
//
// Remote calls travel as UCP active messages. As on mpi, senders append
// to an outgoing queue and whichever thread holds the UCP lock (an idle
// worker polling, a task's publish hook, the progress thread) hands the
// queue to UCP: the worker runs UCS_THREAD_MODE_SERIALIZED and many worker
// threads never contend inside UCX. A worker's task that finds the lock
// free and nothing queued skips the queue: it writes its frame straight
// into the frames for the destination (and sends them at once if it is the
// task's first message and the worker has nothing else to run). Small
// messages are frames of the mpi backend's format (am/mpi/frame_codec.hpp),
// those gathered for one rank in one pass coalesced into one active
// message; a message too large to
// flatten sends its descriptor frame as the active message's header and
// its body and bulk segments zero-copy as the payload (an iov), which UCP
// moves by rendezvous when it is long. The receiver keeps each sender's
// order (am/ucx/ucx_inbox.hpp). One-sided operations go straight to UCP's
// RMA and atomics (am/ucx/ucx_one_sided.hpp). MPI only starts the job:
// the worker addresses and remote keys are exchanged over it, and the
// quiescence sums and the teardown barrier use it (am/ucx/ucx_bootstrap.hpp).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "am/message.hpp"

namespace weft::detail {

class wire_buffer;

/// What the runtime hands the transport, from its options.
struct ucx_transport_settings {
  /// Frames up to this size carry their bulk segments (--weft:eager);
  /// larger messages send body and segments zero-copy.
  std::size_t eager_limit = std::size_t{64} << 10;
  /// Most bytes of coalesced frames per active message (--weft:coalesce).
  std::size_t coalesce_limit = std::size_t{64} << 10;
  /// Ranks per node (--weft:node-size): when > 0 the host's ranks are cut
  /// into groups of this many consecutive ranks, each a node of its own.
  int node_size = 0;
  /// Offer one-sided operations (one_sided()); off: null, and the layers
  /// above move bytes with messages. Between processes of one host UCX
  /// emulates them with messages the target's worker answers
  /// (ucx_one_sided.hpp).
  bool one_sided = true;
  /// Tell the layers the operations need no action of the target
  /// (one_sided_ops::target_passive; --weft:ucx-rma=on: a network whose
  /// RMA and atomics UCX does in hardware), if every rank says so.
  bool one_sided_passive = false;
};

class ucx_transport final : public am_transport {
 public:
  /// Initializes MPI if needed (for the bootstrap), then UCP; collective.
  ucx_transport(am_dispatch_fn dispatch, const ucx_transport_settings& settings);
  ~ucx_transport() override;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  int local_rank() const noexcept { return local_rank_; }
  int local_size() const noexcept { return local_size_; }
  /// This rank among the ranks of its host, and how many there are (for
  /// pinning, which --weft:node-size does not change).
  int host_rank() const noexcept { return host_rank_; }
  int host_size() const noexcept { return host_size_; }
  void set_context(void* ctx) noexcept { ctx_ = ctx; }

  void send(int dest, am_message&& m) override;
  bool progress() override;
  job_shape shape() const noexcept override { return {rank_, size_, local_rank_, local_size_}; }
  bool same_node(int rank) const noexcept override;
  std::array<std::uint64_t, 3> global_sum(std::array<std::uint64_t, 3> local) override;
  abort_fn job_abort() const noexcept override;
  /// A task's queued messages go to UCP when it ends, waits or yields.
  void attach_publisher(scheduler& s) noexcept override;
  /// Node peers open a heap by name in /dev/shm (pgas/heap_mapping.cpp).
  bool node_shared_memory() const noexcept override { return true; }
  one_sided_ops* one_sided() noexcept override;

 private:
  struct impl;
  bool progress_locked();
  /// Hands the queue and the frames send() gathered to UCP; true if there
  /// were any.
  bool send_queued();
  /// Adds `m` to the frames for its destination, or sends it as a large message.
  void take(int dest, am_message&& m);
  /// The frames gathered for `dest` in this pass, with room for a frame of
  /// `most_bytes` within the coalescing limit (sending them first if not).
  wire_buffer& frames_for(int dest, std::size_t most_bytes);
  /// Sends the frames gathered for `dest` (if any) as one active message.
  void send_frames(int dest);
  /// send_frames for every rank take() gathered frames for.
  void send_touched();
  void send_large(int dest, am_message&& m);
  /// Frees what completed sends held; true if any.
  bool retire_sends();
  /// Sends what the workers queued unless the calling worker has other
  /// tasks ready (the scheduler's publish hook); flush_now: even then.
  void flush();
  void flush_now();

  std::unique_ptr<impl> p_;
  am_dispatch_fn dispatch_;
  void* ctx_ = nullptr;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, host_rank_ = 0, host_size_ = 1;
  std::vector<int> node_ranks_;  // ascending, this rank included
  std::size_t eager_limit_, coalesce_limit_;
  std::size_t max_segments_ = 0;  // the descriptor of a large message travels in a UCP header
  bool publishing_ = false;
  bool offers_one_sided_ = true;
};

}  // namespace weft::detail
