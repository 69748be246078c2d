// Internal: the coll layer's per-rank state (am layer state, created on
// first use): the mailboxes where messages of each collective step collect.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "am/rank_comm.hpp"
#include "weft/sched.hpp"

namespace weft::detail {

/// Messages of one collective step, by source rank, until `expected` came.
struct coll_slot {
  std::vector<std::vector<std::byte>> by_rank;  // indexed by source rank
  int arrived = 0;
  int expected = -1;  // -1: nobody waits yet
  promise<std::vector<std::vector<std::byte>>> done;
};

struct coll_state {
  explicit coll_state(rank_comm& c) : nranks(c.nranks) {}
  const int nranks;
  // Every rank numbers its collective calls; all ranks make them in the same
  // order, so (sequence, phase) names one step everywhere.
  std::uint64_t next_collective = 0;
  std::mutex mutex;
  std::map<std::pair<std::uint64_t, int>, coll_slot> slots;
};

}  // namespace weft::detail
