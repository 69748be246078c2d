// Internal: the transport contract — everything the layers above am may ask
// of a backend. No layer above am names a concrete transport: the runtime
// starts one from its backend table (runtime/backend_select.cpp) and from
// then on sees only am_transport.
//
// A backend provides, per local rank:
//   - messages: send, progress;
//   - the job's shape: world and node rank and size;
//   - job control: a job-wide sum of a few counters (start-up and the
//     quiescence test at stop), and a way to end every rank;
//   - worker-driven progress: the scheduler's publish hook, and where idle
//     workers sleep so that senders on the node wake them;
//   - node-shared memory: whether ranks in other processes of the node can
//     map a heap this rank names (POSIX shared memory);
//   - optionally one-sided operations (one_sided_ops below): null when the
//     backend moves bytes with messages only.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft::detail {

class am_message;
class scheduler;
struct sleep_slot;

/// Delivery of a message on its destination rank (called from progress).
/// Handler tasks it starts are queued without waking idle workers; the
/// transport wakes one per delivered batch (am_transport::delivered).
using am_dispatch_fn = void (*)(void* rank_ctx, am_message&& m);

/// Wakes an idle worker of `s` (defined by the scheduler).
void wake_one_worker(scheduler* s) noexcept;

/// Where a rank sits in the job. A node is what shares memory: the ranks of
/// one process on smp, the ranks of one host (as MPI reports it) on mpi.
struct job_shape {
  int rank = 0;
  int size = 1;
  int node_rank = 0;
  int node_size = 1;
};

/// One-sided access to registered memory of other ranks, without their
/// workers' help. Optional: am_transport::one_sided() is null where the
/// backend does not offer it (then puts, gets and atomics travel as
/// messages the target answers).
class one_sided_ops {
 public:
  /// Names a registered region for every rank (a symmetric heap is
  /// registered by every rank in the same order, so the keys agree).
  using region_key = std::uint64_t;

  virtual ~one_sided_ops() = default;
  /// Whether the operations complete with no action of the target's CPU
  /// (its workers may be busy in a long task and never poll) and the
  /// atomics are atomic with the target's own CPU atomics on the same
  /// words. Layers route work through one-sided operations only then:
  /// where the library serves them from the target's progress calls (MPICH
  /// over UCX here runs MPI RMA so, docs/PGAS.md), messages are as fast and
  /// keep the target's workers awake.
  virtual bool target_passive() const noexcept = 0;
  /// Registers `bytes` at `base` (collective over the job); the key other
  /// ranks address it with.
  virtual region_key register_region(void* base, std::size_t bytes) = 0;
  /// Copies `n` bytes to / from (rank, region, offset). Complete at the
  /// next flush of that rank.
  virtual void put(int rank, region_key region, std::size_t offset, const void* src, std::size_t n) = 0;
  virtual void get(int rank, region_key region, std::size_t offset, void* dst, std::size_t n) = 0;
  /// 64-bit atomics on an 8-byte aligned word; they return the old value.
  virtual std::uint64_t fetch_add(int rank, region_key region, std::size_t offset, std::uint64_t add) = 0;
  virtual std::uint64_t compare_swap(int rank, region_key region, std::size_t offset, std::uint64_t expected,
                                     std::uint64_t desired) = 0;
  virtual std::uint64_t swap(int rank, region_key region, std::size_t offset, std::uint64_t value) = 0;
  /// Completes this rank's operations towards `rank` / towards every rank.
  virtual void flush(int rank) = 0;
  virtual void flush_all() = 0;
};

/// What a backend offers the layers above (one object per local rank).
class am_transport {
 public:
  /// Ends every rank of the job with `code`; callable at any time, also
  /// after the transport is gone.
  using abort_fn = void (*)(int code) noexcept;

  virtual ~am_transport() = default;

  // Messages.
  /// Sends `m` to `dest` (m.source is filled in). Thread-safe; never blocks
  /// on the receiver. The transport owns `m` until it is delivered or its
  /// contents are sent (that is when the body's `keep` is released).
  virtual void send(int dest, am_message&& m) = 0;
  /// Delivers pending incoming messages to the dispatcher; true if any.
  /// Thread-safe (concurrent callers return at once).
  virtual bool progress() = 0;

  // The job.
  virtual job_shape shape() const noexcept = 0;
  /// Whether `rank` shares this rank's node: its memory may be mapped, its
  /// deques reached by loads, its messages go through node rings. A node is
  /// the real one (the process on smp, the host on mpi), cut into groups of
  /// --weft:node-size consecutive ranks when that option is set, so that
  /// node-size=1 makes every other rank remote. Layers ask this, never the
  /// host or the process, before taking an intra-node path.
  virtual bool same_node(int rank) const noexcept = 0;
  /// Sums `local`, this process's counts, over every process of the job,
  /// progressing messages while it waits (ranks not there yet get served).
  /// Collective: every process calls it, from one thread, equally often.
  virtual std::array<std::uint64_t, 3> global_sum(std::array<std::uint64_t, 3> local) = 0;
  /// How to end every rank when one fails; null: ending this process does.
  virtual abort_fn job_abort() const noexcept { return nullptr; }

  // Worker-driven progress.
  /// Installs this transport's publish hook on `s`, this rank's scheduler:
  /// a task's messages leave when it ends, waits or yields.
  virtual void attach_publisher(scheduler& s) noexcept = 0;
  /// Where this rank's idle workers sleep so that senders on the node wake
  /// them (scheduler::sleep_in); null: senders wake them otherwise.
  virtual sleep_slot* node_sleep_slot() noexcept { return nullptr; }

  // Memory.
  /// Ranks in other processes of this node can map a heap this rank
  /// creates as a named POSIX shared-memory object.
  virtual bool node_shared_memory() const noexcept { return false; }
  /// One-sided operations, or null when this backend has none.
  virtual one_sided_ops* one_sided() noexcept { return nullptr; }

  /// The rank's scheduler: its handler tasks run there.
  scheduler* owner = nullptr;
  /// Messages handed to the dispatcher so far (quiescence: compared with
  /// what all ranks sent). Counted per batch, after the batch's handlers
  /// were queued, so it never runs ahead of the work it stands for.
  std::atomic<std::uint64_t> handled{0};

 protected:
  /// After a batch of deliveries: one count and one wake-up for all the
  /// handler tasks it queued (one atomic and one fence per batch instead of
  /// one per message).
  void delivered(std::size_t n) noexcept {
    if (n == 0) return;
    handled.fetch_add(n, std::memory_order_release);
    if (owner != nullptr) wake_one_worker(owner);
  }
};

}  // namespace weft::detail
