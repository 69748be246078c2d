// Internal: one rank's communication context — its transport, its scheduler,
// the message counters that finalize uses to detect global quiescence, and
// the collective mailboxes.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "am/message.hpp"
#include "sched/scheduler.hpp"
#include "weft/sched.hpp"

namespace weft::detail {

/// Messages of one collective step, by source rank, until `expected` came.
struct coll_slot {
  std::vector<std::vector<std::byte>> by_rank;  // indexed by source rank
  int arrived = 0;
  int expected = -1;  // -1: nobody waits yet
  promise<std::vector<std::vector<std::byte>>> done;
};

struct rank_comm {
  rank_comm(int r, int n, scheduler* s) : rank(r), nranks(n), sched(s) {}
  int rank;
  int nranks;
  scheduler* sched;
  am_transport* transport = nullptr;
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> handled{0};

  void send(int dest, am_message&& m);

  // Collectives: every rank numbers its collective calls; all ranks make
  // them in the same order, so (sequence, phase) names one step everywhere.
  std::uint64_t next_collective = 0;
  std::mutex coll_mutex;
  std::map<std::pair<std::uint64_t, int>, coll_slot> coll_slots;
};

/// The calling thread's rank context; ends the job with a clear message if
/// there is none (no runtime).
rank_comm& current_comm();

/// Entry point for every message arriving at a rank (runs inside progress).
void am_dispatch(void* rank_ctx, am_message&& m);

/// Collective mailbox delivery (coll layer).
void collective_arrived(rank_comm& c, am_message&& m);

}  // namespace weft::detail
