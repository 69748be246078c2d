// Internal: put and get that complete before they return, where they can.
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft::detail::pgas {

/// Copies `bytes` into (out of) heap byte `offset` of `rank` at once when
/// its heap is mapped here or the transport has one-sided operations (both
/// complete at return: no future to make or wait for); false, doing
/// nothing, when the transfer must go by messages (put_bytes, get_bytes).
/// Ends the job on a range outside the heap, as those do.
bool put_bytes_at_once(int rank, std::uint64_t offset, const void* src, std::size_t bytes);
bool get_bytes_at_once(int rank, std::uint64_t offset, void* dst, std::size_t bytes);

}  // namespace weft::detail::pgas
