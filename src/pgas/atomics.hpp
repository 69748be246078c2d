// Internal: applying one atomic operation to heap memory with CPU atomics
// (std::atomic_ref), on the calling thread — by the origin when the target
// heap is mapped in its process, by the target when the request came as a
// message. Both use the same instructions on the same memory, so the two
// paths are atomic with respect to each other, across processes too.
#pragma once
#include <cstddef>
#include <cstdint>

#include "pgas/one_sided_heap.hpp"
#include "weft/pgas.hpp"

namespace weft::pgas::detail {

using weft::detail::pgas::atomic_op;
using weft::detail::pgas::atomic_type;

/// Bytes of an operand of type `t`.
std::size_t width_of(atomic_type t) noexcept;

/// Applies `op` at `p` (aligned to its width); returns the old value's bits.
std::uint64_t apply_atomic(std::byte* p, atomic_type t, atomic_op op, std::uint64_t a, std::uint64_t b) noexcept;

/// Applies `op` at (rank, offset) with the transport's one-sided atomics
/// (h.ops not null); returns the old value's bits.
std::uint64_t one_sided_atomic(const one_sided_heap& h, int rank, std::uint64_t offset, atomic_type t, atomic_op op,
                               std::uint64_t a, std::uint64_t b);

/// Ends the job unless `t`/`op` are a valid pair and `offset` is aligned.
void check_atomic(int origin, int target, std::uint64_t offset, atomic_type t, atomic_op op);

}  // namespace weft::pgas::detail
