// Internal: received bytes that handlers may hold views into (the mpi and
// ucx transports' receive buffers).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace weft::detail {

/// One block of received bytes. Small messages are copied out of it while
/// their frames are read; larger bulk segments are handed to the handlers
/// as views into it, each holding a reference, so the block goes back to
/// its pool (or is freed) only when the last of them is done.
struct recv_block {
  std::atomic<std::uint32_t> refs{1};  // the pool's (if pooled), the reader's while reading, one per view
  std::size_t capacity = 0;
  std::unique_ptr<std::byte[]> data;
  static void release(void* p) noexcept {
    auto* b = static_cast<recv_block*>(p);
    if (b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete b;
  }
  bool free() const noexcept { return refs.load(std::memory_order_acquire) == 1; }  // pooled: only the pool's
};

}  // namespace weft::detail
