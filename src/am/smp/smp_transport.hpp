// Internal: the in-process transport of the smp backend. Ranks are thread
// groups of one process, so a message is *moved* to its destination: no copy
// of the payload at all, whatever its size. Each (source worker, destination
// rank) pair has a single-producer lock-free ring (am/pair_ring.hpp), and
// each (source rank, destination rank) pair one multi-producer ring for the
// source's other threads (main thread, progress thread), all created on
// first use; a full
// ring spills into a locked overflow list, so sending never blocks and no
// message is lost. Messages carry no ordering guarantee (as over MPI, where
// a large message may finish after a later small one).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "am/message.hpp"
#include "am/smp/pair_ring.hpp"
#include "sched/spin_mutex.hpp"

namespace weft::detail {

class scheduler;

class smp_world {
 public:
  /// `threads`: workers per rank (each gets its own single-producer rings).
  smp_world(int nranks, int threads);
  ~smp_world();
  int nranks() const noexcept { return static_cast<int>(inboxes_.size()); }
  /// Wires rank r to its scheduler (woken on arrival) and dispatcher.
  void attach(int r, scheduler* s, am_dispatch_fn fn, void* ctx);
  std::unique_ptr<am_transport> make_transport(int r);

 private:
  friend class smp_transport;
  static constexpr std::size_t ring_capacity = 1024;
  struct alignas(64) inbox {
    inbox(int nranks, int threads)
        : from(static_cast<std::size_t>(nranks) * static_cast<std::size_t>(threads + 1)),
          rings(std::make_unique<pair_ring*[]>(from.size())) {}
    // Read by senders on every message (never written after start-up).
    // By source rank r and producer p: index r * (threads + 1) + p, where
    // p = 0 is the shared ring of r's non-worker threads and p = 1 + w
    // worker w's own. Created on first send.
    std::vector<std::atomic<pair_ring*>> from;
    // The rings created so far, in creation order: the consumer polls
    // these, not every slot of `from`. A rank hears from few of the others
    // (collectives go along trees), and scanning all ranks x threads slots
    // on every idle poll made start-up quadratic in the ranks.
    std::unique_ptr<pair_ring*[]> rings;
    std::atomic<std::size_t> n_rings{0};
    std::mutex rings_mutex;  // ring creation only
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
  /// The ring of producer `index` towards `in` (created on first use).
  pair_ring& ring(inbox& in, std::size_t index) {
    if (pair_ring* r = in.from[index].load(std::memory_order_acquire)) [[likely]]
      return *r;
    return make_ring(in, index);
  }
  pair_ring& make_ring(inbox& in, std::size_t index);
  /// Something to deliver to `in`? Loads only, so idle pollers cost the
  /// producers nothing (no shared counter bounced per message).
  static bool has_news(const inbox& in) noexcept;
  /// Messages written to `in` and not yet published? (Reads the producers'
  /// tail lines: only now and then.)
  static bool holds_unpublished(const inbox& in) noexcept;
  int threads_;
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
  am_return_channel& returns(int rank, int worker_index) noexcept {
    return returns_[worker_slot(rank, worker_index)].channel;
  }
};

class smp_transport final : public am_transport {
 public:
  smp_transport(smp_world& w, int rank) : world_(w), rank_(rank) {}
  void send(int dest, am_message&& m) override;
  bool progress() override;
  /// Installs publish_worker as `s`'s publish hook (s: this rank's scheduler).
  void attach_publisher(scheduler& s) noexcept;

 private:
  /// Rings a worker publishes at once when it has written this many
  /// messages to one of them (else at its next scheduling point).
  static constexpr std::uint64_t publish_batch = 16;
  /// Every this many empty polls of a rank, one also takes messages written
  /// and not yet published (a few microseconds of polling; power of two).
  static constexpr std::uint32_t unpublished_check_interval = 64;
  /// scheduler::publish: publishes worker `index`'s rings (ctx: the transport).
  static void publish_worker(void* self, int index) noexcept;
  /// One attempt to put `m` into the calling thread's ring towards `in`.
  bool push(smp_world::inbox& in, am_message& m);

  smp_world& world_;
  int rank_;
  std::vector<am_message> spilled_;  // reused by the consumer
};

}  // namespace weft::detail
