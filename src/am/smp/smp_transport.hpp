// Internal: the in-process transport of the smp backend. Ranks are thread
// groups of one process, so a message is *moved* to its destination: no copy
// of the payload at all, whatever its size. Each destination rank has one
// multi-producer lock-free ring (am/pair_ring.hpp) that every sender may
// use, and up to `dedicated_per_inbox` single-producer rings, each owned by
// one (source worker, destination rank) pair that keeps sending: the
// memory grows with the ranks, not with their square (a ring per pair was
// 64 GiB for all-to-all traffic at 1024 ranks). While the world is small
// enough for every worker to have its own ring towards every rank, each
// gets one on its first message, as in a ring-per-pair design. A full
// ring spills into a locked overflow list, so sending never blocks and no
// message is lost. Messages carry no ordering guarantee (as over MPI, where
// a large message may finish after a later small one), so a pair may move
// from the shared ring to its own at any message.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "am/message.hpp"
#include "am/smp/pair_ring.hpp"
#include "am/smp/smp_one_sided.hpp"
#include "sched/spin_mutex.hpp"

namespace weft::detail {

class scheduler;

class smp_world {
 public:
  /// `threads`: workers per rank (each gets its own single-producer rings).
  /// `node_size`: each that many consecutive ranks form one node
  /// (--weft:node-size; 0: the process is the node). The rings below carry
  /// every message whatever the node: they are the smp backend's network.
  smp_world(int nranks, int threads, int node_size = 0);
  ~smp_world();
  int nranks() const noexcept { return static_cast<int>(inboxes_.size()); }
  /// Whether ranks `a` and `b` are on one node.
  bool same_node(int a, int b) const noexcept { return node_size_ == 0 || a / node_size_ == b / node_size_; }
  /// Rank `r`'s place in its node, and the ranks there.
  job_shape shape_of(int r) const noexcept {
    if (node_size_ == 0) return {r, nranks(), r, nranks()};
    const int first = r - r % node_size_;
    return {r, nranks(), r - first, std::min(node_size_, nranks() - first)};
  }
  /// Wires rank r to its scheduler (woken on arrival) and dispatcher.
  void attach(int r, scheduler* s, am_dispatch_fn fn, void* ctx);
  std::unique_ptr<am_transport> make_transport(int r);

 private:
  friend class smp_transport;
  static constexpr std::size_t ring_capacity = 1024;  // slots of 64 B: 64 KiB a ring
  /// The shared ring holds 4 messages per rank, 1024 to 4096: with one full,
  /// senders yield until the destination drains it, which on oversubscribed
  /// cores took most of an all-to-all's time at 1024 ranks (16 s a round
  /// with 1024 slots, 5 s with 4096; docs/BENCHMARKS.md).
  static constexpr std::size_t max_shared_capacity = 4096;
  /// The dedicated rings of the whole world share this much memory.
  static constexpr std::size_t dedicated_ring_budget = std::size_t{256} << 20;
  /// Messages a worker sends one rank through the shared ring before it
  /// asks for a ring of its own (when not every pair can have one).
  static constexpr std::uint32_t dedicated_after = 64;
  struct alignas(64) inbox {
    inbox(int nranks, int threads, std::size_t shared_capacity, std::size_t dedicated)
        : shared(shared_capacity),
          from(static_cast<std::size_t>(nranks) * static_cast<std::size_t>(threads)),
          rings(std::make_unique<pair_ring*[]>(dedicated)),
          dedicated_left(static_cast<long>(dedicated)) {}
    // Every sender without a ring of its own towards this rank.
    pair_ring shared;
    // Read by senders on every message. By source rank r and worker w:
    // index r * threads + w, that worker's own ring, or null. Written only
    // by that worker.
    std::vector<std::atomic<pair_ring*>> from;
    // The dedicated rings created so far, in creation order: the consumer
    // polls these and the shared ring, not every slot of `from`.
    std::unique_ptr<pair_ring*[]> rings;
    std::atomic<std::size_t> n_rings{0};
    std::atomic<long> dedicated_left;  // rings this inbox may still create
    std::mutex rings_mutex;            // ring creation only
    scheduler* sched = nullptr;
    am_dispatch_fn dispatch = nullptr;
    void* ctx = nullptr;
    // The consumer's flag, on its own line: were it next to what senders
    // read, every poll would steal that line from them (false sharing).
    alignas(64) spin_mutex consuming;  // one consumer at a time (try_lock only)
    // Idle polls, counted to look for unpublished messages every
    // unpublished_check_interval-th (own line: idle workers bump it).
    alignas(64) std::atomic<std::uint32_t> quiet_polls{0};
    // Touched only when a ring stays full.
    alignas(64) std::atomic<std::size_t> spilled{0};  // messages in `overflow`
    std::mutex overflow_mutex;
    std::vector<am_message> overflow;
  };
  /// Worker `worker_index` of `rank`'s own ring towards rank `dest`, or
  /// null while it sends through the shared ring (made once it qualifies).
  pair_ring* ring(int rank, int worker_index, int dest) {
    inbox& in = *inboxes_[static_cast<std::size_t>(dest)];
    if (pair_ring* r = in.from[worker_slot(rank, worker_index)].load(std::memory_order_relaxed)) [[likely]]
      return r;
    return make_ring(rank, worker_index, dest);
  }
  pair_ring* make_ring(int rank, int worker_index, int dest);
  /// Something to deliver to `in`? Loads only, so idle pollers cost the
  /// producers nothing (no shared counter bounced per message).
  static bool has_news(const inbox& in) noexcept;
  /// Messages written to `in` and not yet published? (Reads the producers'
  /// tail lines: only now and then.)
  static bool holds_unpublished(const inbox& in) noexcept;
  int threads_;
  int node_size_;
  // Out-of-line blocks coming back to the worker that sent them, by
  // rank * threads + worker (see am_return_channel). Declared before the
  // inboxes so it outlives them: messages still in an overflow list at
  // destruction send their blocks here.
  struct alignas(64) padded_channel {
    am_return_channel channel;
  };
  std::unique_ptr<padded_channel[]> returns_;
  // By rank * threads + worker: the worker's rings holding messages it has
  // not published yet (batched publication, am/pair_ring.hpp), each with
  // the scheduler of the rank it feeds, which publication wakes.
  struct unpublished_ring {
    pair_ring* ring;
    scheduler* consumer;
  };
  struct alignas(64) producer {
    std::vector<unpublished_ring> unpublished;
    // By destination rank: messages sent through its shared ring, counted
    // towards dedicated_after (sized on first use; empty when every pair
    // gets its ring at once).
    std::vector<std::uint32_t> shared_sends;
  };
  // Kept apart from returns_: other threads push onto a return channel,
  // while a producer's list is only ever touched by its worker.
  std::unique_ptr<producer[]> producers_;
  /// Where worker `worker_index` of `rank` sits in returns_ and producers_.
  std::size_t worker_slot(int rank, int worker_index) const noexcept {
    return static_cast<std::size_t>(rank) * static_cast<std::size_t>(threads_) + static_cast<std::size_t>(worker_index);
  }
  producer& producer_of(int rank, int worker_index) noexcept { return producers_[worker_slot(rank, worker_index)]; }
  std::vector<std::unique_ptr<inbox>> inboxes_;
  bool ring_per_pair_;  // every worker gets its own ring towards every rank
  smp_region_table regions_;  // what the ranks registered for one-sided access
  am_return_channel& returns(int rank, int worker_index) noexcept {
    return returns_[worker_slot(rank, worker_index)].channel;
  }
};

class smp_transport final : public am_transport {
 public:
  smp_transport(smp_world& w, int rank) : world_(w), rank_(rank) {}
  void send(int dest, am_message&& m) override;
  bool progress() override;
  /// Every rank is in this process, which is the node unless
  /// --weft:node-size cuts it into several.
  job_shape shape() const noexcept override { return world_.shape_of(rank_); }
  bool same_node(int rank) const noexcept override { return world_.same_node(rank_, rank); }
  /// The job is this process: its counts are already the job's.
  std::array<std::uint64_t, 3> global_sum(std::array<std::uint64_t, 3> local) override { return local; }
  /// Installs publish_worker as `s`'s publish hook (s: this rank's scheduler).
  void attach_publisher(scheduler& s) noexcept override;
  /// Plain memory of the same process (smp_one_sided.hpp).
  one_sided_ops* one_sided() noexcept override { return &one_sided_; }

 private:
  /// Rings a worker publishes at once when it has written this many
  /// messages to one of them (else at its next scheduling point).
  static constexpr std::uint64_t publish_batch = 16;
  /// Every this many empty polls of a rank, one also takes messages written
  /// and not yet published (a few microseconds of polling; power of two).
  static constexpr std::uint32_t unpublished_check_interval = 64;
  /// scheduler::publish: publishes worker `index`'s rings (ctx: the transport).
  static void publish_worker(void* self, int index) noexcept;
  /// One attempt to put `m` into the calling thread's ring towards `dest`.
  bool push(int dest, smp_world::inbox& in, am_message& m);

  smp_world& world_;
  int rank_;
  smp_one_sided one_sided_{world_.regions_, rank_, world_.nranks()};
  std::vector<am_message> spilled_;  // reused by the consumer
};

}  // namespace weft::detail
