// Internal: the transport of the mpi backend (one rank per process, MPICH).
//
// Every MPI call is made by whichever thread holds the progress lock
// (MPI_THREAD_SERIALIZED): senders only append to an outgoing queue, so many
// worker threads never contend inside MPI (the lesson of the LCI paper).
// Small messages travel on the eager tag, header, body and bulk segments
// flattened into one frame; the frames of all messages queued for one
// destination in a progress pass share one MPI message (coalescing: under
// load, one MPI_Isend and one receive carry dozens of small messages),
// received by a few MPI_ANY_SOURCE receives kept posted.
// Large ones send a descriptor frame on the
// eager tag and then each segment straight from the sender's memory on the
// bulk tag; the receiver posts those receives in the order descriptors
// arrive, which MPI's non-overtaking rule makes match the sends — so no tag
// space is consumed per message and there is no limit on messages in flight.
// Between ranks on one node the frames travel through shared-memory rings
// (node_rings) instead of the eager tag, in the same order and format;
// large segments still go on the bulk tag (--weft:node-rings=0: MPI only).
// A segment longer than the chunk size (1 GiB; MPI counts are ints) goes as
// several MPI messages on the bulk tag, received in the same pieces.
#pragma once
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "am/message.hpp"
#include "sched/spin_mutex.hpp"

namespace weft::detail {

struct in_flight_send;
struct recv_block;
class mpi_one_sided;
class node_rings;
struct sleep_slot;

/// What the runtime hands the transport, from its options (--weft:eager,
/// --weft:coalesce, --weft:node-rings, --weft:mpi-chunk, --weft:node-size).
/// The bounds are the option table's limits.
struct mpi_transport_settings {
  /// Frames up to this size carry their bulk segments; larger ones send them apart.
  std::size_t eager_limit;
  /// Most bytes of coalesced frames per MPI message.
  std::size_t coalesce_limit;
  /// Frames for ranks on this node go through shared memory (only if every rank asks).
  bool node_rings;
  /// Most bytes one MPI send or receive of a segment moves; longer ones go in pieces.
  std::size_t chunk;
  /// Offer one-sided operations over MPI-3 RMA (mpi_one_sided.hpp), if every rank asks; off: none.
  bool one_sided = true;
  /// Tell the layers the MPI library performs them without the target
  /// (one_sided_ops::target_passive; --weft:mpi-rma=on), if every rank says so.
  bool one_sided_passive = false;
  /// Each this many consecutive ranks of a host form one node (0: the host
  /// is the node); every rank must be given the same.
  int node_size = 0;

  static constexpr std::size_t min_eager = std::size_t{1} << 10;  // room for the longest descriptor
  /// Each rank keeps four receives of the larger of eager and coalesce posted.
  static constexpr std::size_t max_eager = std::size_t{16} << 20;
  /// A shared-memory ring holds the longest eager message twice; none is
  /// made larger than this (eager or coalesce of 8M or more: MPI alone).
  static constexpr std::size_t max_ring_bytes = std::size_t{16} << 20;
  static constexpr std::size_t min_chunk = std::size_t{4} << 10;
  static constexpr std::size_t max_chunk = std::size_t{1} << 30;  // MPI counts are ints
};

class mpi_transport final : public am_transport {
 public:
  /// Initializes MPI if needed (once per process; MPI_Finalize runs at
  /// exit, unless the runtime is still running then: see
  /// runtime/failure_report.hpp).
  mpi_transport(am_dispatch_fn dispatch, const mpi_transport_settings& settings);
  ~mpi_transport() override;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  /// This rank's place among the ranks of its node, and their number (the
  /// host's ranks, cut by --weft:node-size).
  int local_rank() const noexcept { return local_rank_; }
  int local_size() const noexcept { return local_size_; }
  /// The same on the host, whatever the node size: what pinning shares out.
  int host_rank() const noexcept { return host_rank_; }
  int host_size() const noexcept { return host_size_; }
  void set_context(void* ctx) noexcept { ctx_ = ctx; }

  void send(int dest, am_message&& m) override;
  bool progress() override;
  job_shape shape() const noexcept override { return {rank_, size_, local_rank_, local_size_}; }
  bool same_node(int rank) const noexcept override {
    return std::binary_search(node_ranks_.begin(), node_ranks_.end(), rank);
  }
  abort_fn job_abort() const noexcept override { return &abort_world; }
  /// Node peers open a heap by name in /dev/shm (pgas/heap_mapping.cpp).
  bool node_shared_memory() const noexcept override { return true; }
  /// MPI-3 RMA windows, unless the settings turned them off.
  one_sided_ops* one_sided() noexcept override;
  /// Hands what the workers queued to MPI (or the node's rings) now, unless the calling worker
  /// has other tasks ready (they may add to the batch; the next progress
  /// pass sends it) or another thread is inside a progress pass (which
  /// sends it). The scheduler's publish hook (attach_publisher): a task's
  /// messages leave when it ends, waits or yields.
  void flush();
  /// flush() even when the calling worker has other tasks ready (the
  /// scheduler's publish_now hook).
  void flush_now();
  /// Installs flush as `s`'s publish hook (s: this rank's scheduler; for
  /// worker-driven progress) and lets send() hand a task's first message
  /// to MPI itself.
  void attach_publisher(scheduler& s) noexcept override;
  /// Where this rank's idle workers should sleep so that ranks of this node
  /// writing to its rings wake them (scheduler::sleep_in); null without rings.
  sleep_slot* node_sleep_slot() noexcept override;

  /// A non-blocking allreduce over the world, progressed while it waits.
  std::array<std::uint64_t, 3> global_sum(std::array<std::uint64_t, 3> local) override;
  /// MPI_Abort on the world.
  [[noreturn]] static void abort_world(int code) noexcept;

 private:
  struct impl;
  bool progress_locked();
  /// Drains the queue into frames and starts their sends; true if any.
  bool send_queued();
  /// Starts the send of a batch append_frame filled (or keeps its buffer).
  void finish_batch(in_flight_send&& b);
  /// Frees the buffers of completed sends; true if any.
  bool retire_sends();
  /// Posts eager receives until posted_receives are pending.
  void repost_receives();
  in_flight_send fresh_batch(int dest);
  in_flight_send& batch_for(int dest);
  void append_frame(in_flight_send& batch, am_message&& m);
  void start_send(in_flight_send&& batch);
  /// start_send for a rank on this node: into its ring, or behind the
  /// batches already waiting for room there.
  void ring_send(int peer, in_flight_send&& batch);
  /// Writes `batch` into `peer`'s ring if there is room; then recycles its
  /// buffer, or moves it to `sends` while its rendezvous segments travel.
  bool try_ring(int peer, in_flight_send& batch);
  /// Makes an MPI progress pass every passes_between_mpi_calls calls, or
  /// in an `idle` pass (one that found nothing) once
  /// idle_time_between_mpi_calls has passed since the last: for passes that
  /// test no request of this rank's (its peers' rendezvous sends complete
  /// only when this rank's MPI answers).
  void keep_mpi_moving(bool idle);
  /// Some rank is not reached by rings_: eager MPI receives are posted and polled.
  bool polls_mpi_eager() const noexcept { return rings_ == nullptr || size_ > local_size_; }
  /// Reports a corrupt or truncated message from `source` and ends the job.
  [[noreturn]] void corrupt_from(int source, const char* why) const;
  /// Creates rings_ when `wanted` (by every rank) and this node has other
  /// ranks, `node_ranks` (world ranks, ascending, this one included);
  /// `job` names the segments (collective over the world).
  void setup_node_rings(bool wanted, const std::vector<int>& node_ranks, std::uint64_t job);
  /// Writes waiting batches into rings that have room again; true if any.
  bool drain_ring_backlog();
  /// Reads frames from this node's rings; returns the records read.
  template <class Deliver>
  int poll_rings(int most, Deliver& deliver);
  /// Sends `batch` now; later frames for its rank go into a fresh one.
  void close_batch(in_flight_send& batch);
  template <class Deliver>
  void read_frames(std::span<const std::byte> buf, int source, recv_block* block, Deliver& deliver);
  std::unique_ptr<impl> p_;
  std::unique_ptr<node_rings> rings_;  // null: every frame goes through MPI
  std::unique_ptr<mpi_one_sided> one_sided_;  // null: settings.one_sided was off
  std::vector<int> node_ranks_;  // world ranks on this node, ascending (this one included)
  std::vector<int> local_of_;  // by world rank: its rank on this node when rings_ reach it, else -1
  std::vector<int> world_of_;  // by rank on this node: its world rank
  am_dispatch_fn dispatch_;
  void* ctx_ = nullptr;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, host_rank_ = 0, host_size_ = 1;
  std::size_t eager_limit_;  // frames up to this size carry their bulk segments
  std::size_t batch_limit_;  // coalesced frames per MPI message, in bytes (a lone frame may exceed it)
  std::size_t recv_size_ = 0;  // the longest eager MPI message any rank sends: max over ranks of both limits
  std::size_t max_segments_ = 0;  // bulk segments one message may have (their lengths travel eagerly)
  std::size_t chunk_;  // most bytes per MPI send or receive on the bulk tag
  int passes_without_mpi_ = 0;  // see keep_mpi_moving
  std::chrono::steady_clock::time_point last_mpi_poke_{};  // see keep_mpi_moving
  bool publishing_ = false;  // attach_publisher was called
  spin_mutex lock_;  // held around every MPI call (polled by idle workers: cheap to take and drop)
};

}  // namespace weft::detail
