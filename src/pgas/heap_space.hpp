// Internal: the bookkeeping of one rank's heap — which byte ranges are in
// use. Symmetric (collective) blocks grow from the bottom, rank-local ones
// from the top (DiOMP's aligned and unaligned global memory), so the
// symmetric allocator sees only symmetric calls: every rank that makes the
// same collective calls in the same order gets the same offsets, with no
// communication. Offsets only; the memory itself is heap_mapping's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace weft::pgas::detail {

class heap_space {
 public:
  static constexpr std::size_t alignment = 64;  // a cache line: no false sharing between blocks

  explicit heap_space(std::size_t size) : size_(size), local_bottom_(size) {}

  /// Offset of a new block of `bytes` (rounded up to the alignment), or
  /// nothing when the heap has no room for it.
  std::optional<std::uint64_t> allocate_symmetric(std::size_t bytes);
  std::optional<std::uint64_t> allocate_local(std::size_t bytes);

  /// The block's length, if `offset` starts a live block of that kind; it is
  /// then freed. Nothing (and no change) otherwise.
  std::optional<std::size_t> free_symmetric(std::uint64_t offset);
  std::optional<std::size_t> free_local(std::uint64_t offset);

  std::size_t size() const noexcept { return size_; }
  std::size_t symmetric_in_use() const;
  std::size_t local_in_use() const;

 private:
  struct region {
    std::map<std::uint64_t, std::size_t> live;  // offset -> length
    std::map<std::uint64_t, std::size_t> free;  // holes below the frontier, coalesced
    std::size_t in_use = 0;
  };
  static std::optional<std::uint64_t> take_hole(region& r, std::size_t n);
  static void add_hole(region& r, std::uint64_t at, std::size_t n);
  static std::optional<std::size_t> release(region& r, std::uint64_t offset);

  mutable std::mutex mutex_;
  const std::size_t size_;
  region sym_;
  region local_;
  std::uint64_t sym_top_ = 0;     // symmetric blocks lie below
  std::uint64_t local_bottom_;    // local blocks lie at or above
};

}  // namespace weft::pgas::detail
