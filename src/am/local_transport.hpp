// Internal: the in-process transport of the smp backend. Ranks are thread
// groups of one process, so a message is *moved* into the destination's
// inbox: no copy of the payload at all, whatever its size. The inbox is a
// mutex-protected vector swapped out whole by the consumer (one lock per
// batch on the receiving side).
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "am/message.hpp"

namespace weft::detail {

class scheduler;

class local_world {
 public:
  explicit local_world(int nranks);
  int nranks() const noexcept { return static_cast<int>(inboxes_.size()); }
  /// Wires rank r to its scheduler (woken on arrival) and dispatcher.
  void attach(int r, scheduler* s, am_dispatch_fn fn, void* ctx);
  std::unique_ptr<am_transport> make_transport(int r);

 private:
  friend class local_transport;
  struct alignas(64) inbox {
    std::mutex mutex;
    std::vector<am_message> queue;
    std::atomic<std::size_t> pending{0};  // lets idle pollers skip the locks
    std::mutex progress_mutex;  // one consumer at a time
    scheduler* sched = nullptr;
    am_dispatch_fn dispatch = nullptr;
    void* ctx = nullptr;
  };
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
  std::vector<am_message> batch_;  // reused under progress_mutex
};

}  // namespace weft::detail
