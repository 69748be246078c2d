// Internal: the in-process transport of the smp backend. Ranks are thread
// groups of one process, so a message is *moved* to its destination: no copy
// of the payload at all, whatever its size. Each (source, destination) pair
// has a lock-free ring (am/pair_ring.hpp), created on first use; a full
// ring spills into a locked overflow list, so sending never blocks and no
// message is lost. Messages carry no ordering guarantee (as over MPI, where
// a large message may finish after a later small one).
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "am/message.hpp"
#include "am/pair_ring.hpp"

namespace weft::detail {

class scheduler;

class local_world {
 public:
  explicit local_world(int nranks);
  ~local_world();
  int nranks() const noexcept { return static_cast<int>(inboxes_.size()); }
  /// Wires rank r to its scheduler (woken on arrival) and dispatcher.
  void attach(int r, scheduler* s, am_dispatch_fn fn, void* ctx);
  std::unique_ptr<am_transport> make_transport(int r);

 private:
  friend class local_transport;
  static constexpr std::size_t ring_capacity = 1024;
  struct alignas(64) inbox {
    explicit inbox(int nranks) : from(static_cast<std::size_t>(nranks)) {}
    // Read by senders on every message (never written after start-up).
    std::vector<std::atomic<pair_ring*>> from;  // by source rank, created on first send
    scheduler* sched = nullptr;
    am_dispatch_fn dispatch = nullptr;
    void* ctx = nullptr;
    // The consumer's flag, on its own line: were it next to what senders
    // read, every poll would steal that line from them (false sharing).
    alignas(64) std::atomic<bool> consuming{false};  // one consumer at a time
    // Touched only when a ring stays full.
    alignas(64) std::atomic<std::size_t> spilled{0};  // messages in `overflow`
    std::mutex overflow_mutex;
    std::vector<am_message> overflow;
  };
  pair_ring& ring(inbox& in, int source);
  /// Something to deliver to `in`? Loads only, so idle pollers cost the
  /// producers nothing (no shared counter bounced per message).
  static bool has_news(const inbox& in) noexcept;
  std::vector<std::unique_ptr<inbox>> inboxes_;
};

class local_transport final : public am_transport {
 public:
  local_transport(local_world& w, int rank) : world_(w), rank_(rank) {}
  void send(int dest, am_message&& m) override;
  bool progress() override;

 private:
  local_world& world_;
  int rank_;
  std::vector<am_message> spilled_;  // reused by the consumer
};

}  // namespace weft::detail
