// Internal: the rma layer's per-rank state and how to find it.
//
// The state hangs off the rank's communication context (rank_comm::rma) so
// it lives exactly as long as the rank: created on first use, destroyed at
// finalize after global quiescence. Every put and get needs it (the origin's
// for its settings, an in-process target's for its segments), so besides the
// shared_ptr slot (which needs rank_comm::rma_mutex to read safely) each
// state is published in a lock-free per-process slot indexed by local rank.
#pragma once
#include <cstddef>

#include "am/rank_comm.hpp"
#include "rma/segment_table.hpp"

namespace weft::rma::detail {

using weft::detail::am_handler;
using weft::detail::am_message;
using weft::detail::rank_comm;

/// Settings the runtime hands down from its options (set_rma_settings),
/// copied into a rank's state when it is created. They exist for testing
/// and tuning, not for ordinary use (docs/RMA.md).
struct rma_settings {
  /// --weft:rma-protocol=messages: reach in-process targets (smp ranks,
  /// this rank itself) through the active-message protocol too, instead of
  /// copying directly. Lets the protocol the mpi backend uses run (and be
  /// checked by ThreadSanitizer) inside one process.
  bool always_messages = false;
  /// --weft:rma-chunk=SIZE: largest piece one message carries; longer
  /// transfers are split. Default 1 GiB (MPI counts are ints).
  std::size_t chunk = std::size_t{1} << 30;
};

/// Sets what the ranks' states created from now on use.
void set_rma_settings(const rma_settings& s) noexcept;

struct rank_state {
  rank_state(rank_comm& c, int local_index);
  ~rank_state();
  rank_state(const rank_state&) = delete;
  rank_state& operator=(const rank_state&) = delete;

  rank_comm& comm;
  const int local_index;  // position among this process's ranks
  const rma_settings settings;
  segment_table segments;
};

/// The rma state of rank context `c`, created on first use.
rank_state& state_of(rank_comm& c);

/// The rank context of global rank `r` if it lives in this process, else
/// nullptr (`r` must be a valid rank).
rank_comm* in_process_comm(int r) noexcept;

}  // namespace weft::rma::detail
