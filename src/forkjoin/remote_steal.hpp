// Internal: stealing from ranks this process cannot map (ranks of other
// nodes) with the transport's one-sided operations, so that the victim's
// CPU takes no part (remote_steal.cpp). Where the transport has none, or
// WEFT_STEAL_RDMA=0 (a testing knob), such ranks are asked by message
// (stealing.cpp, messages.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

#include "am/transport.hpp"

#include "forkjoin/state.hpp"

namespace weft::detail::fj {

/// How one attempt on one deque ended.
enum class attempt_result { taken, empty, busy, other_root };

/// One attempt on the deque at byte `deque_at` of region `key` of rank
/// `victim` (steps 1-5 of remote_steal.cpp), locking it with `mark`
/// (nonzero, not steal_deque::locked_here): `taken` with the oldest entry
/// in `out` when it belongs to root `root`.
attempt_result steal_entry_one_sided(one_sided_ops& ops, int victim, std::uint64_t key, std::size_t deque_at,
                                     std::uint64_t mark, std::uint64_t root, task_entry& out);

/// Whether this rank steals from its remote_victims by one-sided
/// operations (decided at the first call, after the deques exist).
bool steals_one_sided(fj_rank& me) noexcept;

/// One attempt on a random remote victim for a task of root `root`: a task
/// to run, or nullptr (nothing there, its lock busy, another root's task,
/// backing off after failures, or enough attempts of this rank under way).
task_base* steal_one_sided(fj_rank& me, std::uint64_t root) noexcept;

}  // namespace weft::detail::fj
