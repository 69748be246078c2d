// Internal: put and get split by path: at once where the transfer
// completes before it returns, else by message (put_bytes and get_bytes
// are the one, else the other).
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/future.hpp"

namespace weft::detail::pgas {

/// Copies `bytes` into (out of) heap byte `offset` of `rank` at once when
/// its heap is mapped here or the transport has one-sided operations (both
/// complete at return: no future to make or wait for); false, doing
/// nothing, when the transfer must go by messages (put_bytes, get_bytes).
/// Ends the job on a range outside the heap, as those do.
bool put_bytes_at_once(int rank, std::uint64_t offset, const void* src, std::size_t bytes);
bool get_bytes_at_once(int rank, std::uint64_t offset, void* dst, std::size_t bytes);

/// The transfer as rma messages into the target's heap segment (counted in
/// the rank's operations in flight until done); `copy_source`: the source
/// may change once this returns.
future<void> put_bytes_by_message(int rank, std::uint64_t offset, const void* src, std::size_t bytes,
                                  bool copy_source);
future<void> get_bytes_by_message(int rank, std::uint64_t offset, void* dst, std::size_t bytes);

}  // namespace weft::detail::pgas
