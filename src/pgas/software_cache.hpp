// Internal: one rank's software cache for checkouts of memory it reaches by
// messages (Itoyori's design, simplified): a fixed set of block-sized slots
// in one shared-memory file, each holding one block of some rank's heap,
// with the bytes that are valid and the bytes written (dirty) tracked per
// slot. Reads fetch the missing parts of the sub-blocks (4 KiB by default,
// as in Itoyori) they touch; writes fetch nothing; only dirty bytes go
// back, at eviction or at release. A checkout
// spanning several blocks sees them side by side in the target's shadow: a
// reserved range of address space as large as the target's heap, where a
// block's slot is mapped at the block's own place (the same physical pages
// as the slot), so its span is contiguous without a copy. A shadow mapping
// stays until its place is needed for another slot: mapping and unmapping
// a region at every checkout took an eighth of a thief's time in cilksort
// across nodes, and each unmap interrupted the other cores running the
// process to flush their TLBs.
//
// One mutex guards the slots; it is never held while waiting. Transfers are
// issued under it (issuing never blocks) and waited for outside: a slot
// being filled carries the fill's future, and a block whose write-back is
// on its way is not fetched again until it has arrived, so a rank always
// reads its own writes.
//
// An acquire forgets every clean byte, also of slots that other tasks of
// the rank hold checked out — all but the bytes of those checkouts, which
// their holders are reading or writing (refetching them could overwrite a
// holder's writes; a data-race-free program cannot have changed them
// elsewhere meanwhile) — and of fetches on their way, which started before
// the acquire and may bring older data: they land, but count as missing.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "pgas/byte_ranges.hpp"
#include "weft/checkout.hpp"
#include "weft/sched.hpp"

namespace weft::pgas::detail {

struct cache_config {
  std::size_t block = 64 * 1024;
  std::size_t sub_block = 4 * 1024;  // what a read miss fetches at least (whole sub-blocks)
  std::size_t size = 16 * 1024 * 1024;
  bool always = false;  // also for memory this process maps (testing)
};

class software_cache {
 public:
  using access = weft::detail::pgas::access;
  using token = weft::detail::pgas::checkout_token;

  software_cache(int rank, cache_config config, std::size_t segment);
  ~software_cache();
  software_cache(const software_cache&) = delete;
  software_cache& operator=(const software_cache&) = delete;

  const cache_config& config() const noexcept { return config_; }

  /// Pins the blocks of heap bytes [offset, offset + bytes) of `target`,
  /// fills them as `mode` needs and returns the bytes' local address
  /// (bytes > 0). Ends the job when they cannot all be cached at once.
  std::byte* checkout(int target, std::uint64_t offset, std::size_t bytes, access mode, token& t);
  /// Unpins; the bytes of a write or read_write checkout become dirty.
  void checkin(const token& t);
  /// Starts the write-back of every dirty byte and waits until it and every
  /// write-back started before (by eviction or other threads) arrived.
  void release();
  /// Forgets every clean byte (dirty ones stay until released).
  void acquire();

  std::size_t dirty_bytes();
  void count_direct() noexcept { direct_.fetch_add(1, std::memory_order_relaxed); }
  weft::cache_statistics stats();

 private:
  struct slot {
    int target = -1;  // -1: empty
    std::uint64_t block = 0;
    int pins = 0;
    std::uint64_t last_use = 0;
    byte_ranges valid;  // bytes of the block that hold its current contents here
    byte_ranges dirty;  // bytes written here, not yet sent back (a subset of valid)
    shared_future<void> fill;  // gets in flight into this slot, for `filling`
    std::vector<byte_ranges::range> filling;
    std::uint64_t fill_epoch = 0;  // acquires_ when the fill started: an acquire since makes it stale
    std::vector<byte_ranges::range> checked_out;  // the bytes of each live checkout of the block (one entry each)
  };

  std::uint64_t key(int target, std::uint64_t block) const noexcept {
    return static_cast<std::uint64_t>(target) * blocks_per_heap_ + block;
  }
  std::byte* memory(std::uint32_t i) const noexcept { return base_ + std::size_t{i} * config_.block; }
  std::string describe(int target, std::uint64_t offset, std::size_t bytes) const;

  void map_storage();                                         // under mutex_
  void settle(slot& s);                                       // under mutex_
  void forget_clean(slot& s);                                 // under mutex_
  std::optional<std::uint32_t> claim(int target, std::uint64_t block);  // under mutex_
  /// Pins the `held.size()` blocks from `first` for the checkout of
  /// [offset, offset + bytes), or none of them; returns the pinned count of
  /// slots when it could not (every slot pinned by live checkouts). Under mutex_.
  std::optional<int> pin_blocks(int target, std::uint64_t first, std::uint64_t offset, std::size_t bytes,
                                std::span<std::uint32_t> held);
  void write_back(std::uint32_t i);                           // under mutex_
  void fill(int target, std::span<const std::uint32_t> held, std::uint64_t offset, std::size_t bytes,
            access mode);
  /// The span's address with the blocks `held` from block `first` of
  /// `target` side by side (in its shadow; `alias` set to a region of
  /// their own, to unmap at check-in, where no shadow could be reserved).
  std::byte* map_side_by_side(int target, std::uint64_t first, std::span<const std::uint32_t> held,
                              token& t);
  std::byte* shadow_of(int target);                           // under mutex_
  void drop_stale_shadow_mappings();                          // under mutex_

  const int me_;
  const cache_config config_;
  const std::size_t segment_;
  const std::uint64_t blocks_per_heap_;
  std::mutex mutex_;
  std::vector<slot> slots_;
  // Slots holding a block (target >= 0), and the empty ones: a release or
  // an acquire at every fork-join steal and join walks only the blocks in
  // use, not the whole cache (256 slots by default).
  std::vector<std::uint32_t> in_use_;
  std::vector<std::uint32_t> empty_;
  std::unordered_map<std::uint64_t, std::uint32_t> where_;  // block key -> slot
  // Shadows by target (reserved at their first use; null: not yet, or
  // the reservation failed), and the slot mapped at each block's place in
  // them. A place whose block has moved to another slot, or left the
  // cache, is stale; no checkout uses it (a checkout pins its slots).
  std::unordered_map<int, std::byte*> shadows_;
  std::unordered_map<std::uint64_t, std::uint32_t> shadow_slot_;  // block key -> slot mapped there
  std::unordered_map<std::uint64_t, std::vector<shared_future<void>>> write_backs_;  // in flight, by block key
  std::uint64_t clock_ = 0;
  std::uint64_t acquires_ = 0;
  int fd_ = -1;
  std::byte* base_ = nullptr;
  std::atomic<bool> used_{false};  // storage mapped: release and acquire have work only then
  std::atomic<std::uint64_t> direct_{0};
  weft::cache_statistics stats_;
};

}  // namespace weft::pgas::detail
