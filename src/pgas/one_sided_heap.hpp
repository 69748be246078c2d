// Internal: the heaps as regions of the transport's one-sided operations
// (am/transport.hpp, one_sided_ops). At start every rank registers its heap
// and its lock words (mcs_lock.hpp) when the transport offers one-sided
// operations; from then on the memory of ranks this process does not map is
// reached by one-sided puts, gets and atomics, which no handler of the
// target runs (docs/PGAS.md "Which path an operation takes"). Without them
// (or with WEFT_PGAS_ONE_SIDED=0, a testing knob) that memory is reached by
// messages.
#pragma once
#include <cstddef>
#include <cstdint>

#include "am/transport.hpp"

namespace weft::detail {
struct process_runtime;
}

namespace weft::pgas::detail {

struct process_pgas;

/// The heap as a one-sided region: ops is null when the job has none.
struct one_sided_heap {
  weft::detail::one_sided_ops* ops;
  std::uint64_t key;
};

/// How a rank of this process reaches any rank's heap one-sidedly: the ops
/// of `rank`'s transport when `rank` lives in this process, else those of
/// this process's first rank (the key is the same for every rank: the heaps
/// are registered in the same order everywhere). ops null when unavailable.
one_sided_heap heap_one_sided(int rank) noexcept;

/// The calling rank's: ops null when unavailable (the hot paths' test).
one_sided_heap my_heap_one_sided() noexcept;

/// The lock words as a one-sided region (mcs_lock.cpp), with their memory
/// for ranks of this process (null for others).
struct one_sided_words {
  weft::detail::one_sided_ops* ops;
  std::uint64_t key;
};
one_sided_words my_lock_words() noexcept;
std::uint64_t* lock_words_of(int rank) noexcept;
/// Whether global_lock takes the one-sided queue lock (mcs_lock.hpp): the
/// transport has one-sided operations and some rank's heap is not mapped
/// here. The same answer on every rank (mapping is by node).
bool one_sided_locks() noexcept;

/// Counts one-sided operations the pgas layer issued in this process (the
/// tests' evidence that the path was taken).
void count_one_sided(std::uint64_t n = 1) noexcept;
std::uint64_t one_sided_issued() noexcept;

/// At start (state.cpp), after the heaps are mapped: every local rank
/// registers its heap and its lock words with its transport's one-sided
/// operations, when there are any. Collective over the job.
void register_one_sided(process_pgas& p, weft::detail::process_runtime& rt);

}  // namespace weft::pgas::detail
