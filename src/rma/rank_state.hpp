// Internal: the rma layer's per-rank state and how to find it.
//
// The state is am layer state of the rank's communication context, so it
// lives exactly as long as the rank: created on first use, destroyed at
// finalize after global quiescence. Every put and get needs it (the origin's
// for its settings, an in-process target's for its segments); finding it is
// one load once it exists.
#pragma once
#include <cstddef>

#include "am/rank_comm.hpp"
#include "rma/segment_table.hpp"

namespace weft::rma::detail {

using weft::detail::am_handler;
using weft::detail::am_message;
using weft::detail::in_process_comm;
using weft::detail::rank_comm;

/// Settings the runtime hands down from its options (set_rma_settings),
/// copied into a rank's state when it is created. They exist for testing
/// and tuning, not for ordinary use (docs/RMA.md).
struct rma_settings {
  /// --weft:rma-chunk=SIZE: largest piece one message carries; longer
  /// transfers are split. Default 1 GiB (MPI counts are ints).
  std::size_t chunk = std::size_t{1} << 30;
};

/// Sets what the ranks' states created from now on use.
void set_rma_settings(const rma_settings& s) noexcept;

struct rank_state {
  explicit rank_state(rank_comm& c);
  rank_state(const rank_state&) = delete;
  rank_state& operator=(const rank_state&) = delete;

  rank_comm& comm;
  const rma_settings settings;
  segment_table segments;
};

/// The rma state of rank context `c`, created on first use.
inline rank_state& state_of(rank_comm& c) { return weft::detail::layer_state<rank_state>(c); }

}  // namespace weft::rma::detail
