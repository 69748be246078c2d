#include "pgas/software_cache.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include <sys/mman.h>
#include <unistd.h>

#include "pgas/state.hpp"
#include "pgas/transfer_at_once.hpp"
#include "rma/racing_reads.hpp"
#include "weft/pgas.hpp"
#include "weft/this_task.hpp"

namespace weft::pgas::detail {

namespace {

/// One future for all of `fs` (ready at once when they all are).
future<void> all_of(std::vector<future<void>>&& fs) {
  std::erase_if(fs, [](const future<void>& f) { return f.is_ready(); });
  if (fs.empty()) return make_ready_future();
  return when_all(std::move(fs)).then([](auto f) { f.get(); });
}

/// How long a checkout waits for a slot while every slot is pinned.
constexpr double full_cache_wait_s = 10;

std::string sys_error(const char* call) { return std::string(call) + " failed: " + std::strerror(errno); }

/// The part of heap bytes [offset, offset + bytes) inside the block that
/// starts at heap byte `begin`, relative to `begin`.
byte_ranges::range part_in_block(std::uint64_t offset, std::size_t bytes, std::uint64_t begin, std::size_t block) {
  return {static_cast<std::size_t>(std::max(offset, begin) - begin),
          static_cast<std::size_t>(std::min<std::uint64_t>(offset + bytes, begin + block) - begin)};
}

}  // namespace

software_cache::software_cache(int rank, cache_config config, std::size_t segment)
    : me_(rank),
      config_(config),
      segment_(segment),
      blocks_per_heap_((segment + config.block - 1) / config.block),
      slots_(config.size / config.block) {
  in_use_.reserve(slots_.size());
  empty_.reserve(slots_.size());
  for (auto i = static_cast<std::uint32_t>(slots_.size()); i-- > 0;) empty_.push_back(i);  // slot 0 goes first
}

software_cache::~software_cache() {
  for (const auto& [target, shadow] : shadows_)
    if (shadow != nullptr) munmap(shadow, blocks_per_heap_ * config_.block);
  if (base_ != nullptr) munmap(base_, slots_.size() * config_.block);
  if (fd_ >= 0) close(fd_);
}

std::string software_cache::describe(int target, std::uint64_t offset, std::size_t bytes) const {
  return "checkout by rank " + std::to_string(me_) + " of rank " + std::to_string(target) + "'s heap bytes [" +
         std::to_string(offset) + ", " + std::to_string(offset + bytes) + ")";
}

// The slots live in a memory file so that several of them can also be
// mapped side by side for one checkout. Made at the first cached checkout:
// a program that never needs the cache never pays for it.
void software_cache::map_storage() {
  if (base_ != nullptr) return;
  const std::size_t bytes = slots_.size() * config_.block;
  fd_ = memfd_create("weft-cache", MFD_CLOEXEC);
  if (fd_ < 0) fail("software cache of rank " + std::to_string(me_) + ": " + sys_error("memfd_create"));
  if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0)
    fail("software cache of rank " + std::to_string(me_) + ": " + sys_error("ftruncate"));
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) fail("software cache of rank " + std::to_string(me_) + ": " + sys_error("mmap"));
  base_ = static_cast<std::byte*>(p);
  used_.store(true, std::memory_order_release);
}

// A fill that started before the latest acquire may have read bytes older
// than what that acquire must show: its bytes stay missing (the checkouts
// waiting for it fetch them again).
void software_cache::settle(slot& s) {
  if (!s.fill.valid() || !s.fill.is_ready()) return;
  if (s.fill_epoch == acquires_)
    for (const auto& r : s.filling) s.valid.add(r.begin, r.end);
  s.filling.clear();
  s.fill = {};
}

// Keeps the dirty bytes and, of the valid ones, those of live checkouts.
void software_cache::forget_clean(slot& s) {
  if (s.checked_out.empty()) {
    s.valid = s.dirty;  // reusing valid's storage
    return;
  }
  byte_ranges keep = s.dirty;
  for (const auto& h : s.checked_out)
    for (const auto& v : s.valid.items()) keep.add(std::max(h.begin, v.begin), std::min(h.end, v.end));
  s.valid = std::move(keep);
}

// An empty slot (the one still mapped at the block's place in the shadow
// if it is empty: every fork-join steal's acquire empties the slots, and
// the block coming back to its old slot needs no new mapping), else the
// least recently used among the slots no checkout holds and no fill is
// writing into; its dirty bytes go back first (copied, so the slot is free
// at once).
std::optional<std::uint32_t> software_cache::claim(int target, std::uint64_t block) {
  std::optional<std::uint32_t> best;
  if (!empty_.empty()) {
    auto pick = std::prev(empty_.end());
    if (const auto sh = shadow_slot_.find(key(target, block)); sh != shadow_slot_.end() && slots_[sh->second].target < 0)
      pick = std::find(empty_.begin(), empty_.end(), sh->second);  // an empty slot is in empty_
    best = *pick;
    *pick = empty_.back();
    empty_.pop_back();
    in_use_.push_back(*best);
  } else {
    for (std::uint32_t i : in_use_) {
      slot& s = slots_[i];
      settle(s);
      if (s.pins != 0 || s.fill.valid()) continue;
      if (!best || s.last_use < slots_[*best].last_use) best = i;
    }
    if (!best) return std::nullopt;
    slot& s = slots_[*best];
    if (!s.dirty.empty()) write_back(*best);
    where_.erase(key(s.target, s.block));
    ++stats_.evictions;
  }
  slot& s = slots_[*best];
  s.target = target;
  s.block = block;
  s.valid.clear();
  s.dirty.clear();
  where_[key(target, block)] = *best;
  return best;
}

std::optional<int> software_cache::pin_blocks(int target, std::uint64_t first, std::uint64_t offset,
                                             std::size_t bytes, std::span<std::uint32_t> held) {
  const std::size_t block = config_.block;
  for (std::size_t k = 0; k < held.size(); ++k) {
    const auto it = where_.find(key(target, first + k));
    const std::optional<std::uint32_t> i = it != where_.end() ? std::optional(it->second) : claim(target, first + k);
    if (!i) {
      // None or all: a checkout holding part of its blocks while it waits
      // could keep another from ever getting all of its own.
      for (std::size_t j = 0; j < k; ++j) {
        slot& s = slots_[held[j]];
        s.checked_out.pop_back();
        --s.pins;
      }
      int pinned = 0;
      for (const slot& s : slots_) pinned += s.pins != 0;
      return pinned;
    }
    held[k] = *i;
    slot& s = slots_[*i];
    ++s.pins;
    s.checked_out.push_back(part_in_block(offset, bytes, (first + k) * block, block));
    s.last_use = ++clock_;
  }
  return std::nullopt;
}

void software_cache::write_back(std::uint32_t i) {
  slot& s = slots_[i];
  const std::uint64_t at = s.block * config_.block;
  std::vector<future<void>> puts;  // those by message
  for (const auto& r : s.dirty.items()) {
    if (!weft::detail::pgas::put_bytes_at_once(s.target, at + r.begin, memory(i) + r.begin, r.end - r.begin))
      puts.push_back(
          weft::detail::pgas::put_bytes_by_message(s.target, at + r.begin, memory(i) + r.begin, r.end - r.begin, true));
    ++stats_.write_backs;
    stats_.written_back_bytes += r.end - r.begin;
  }
  s.dirty.clear();
  if (puts.empty()) return;
  future<void> all = all_of(std::move(puts));
  if (!all.is_ready()) write_backs_[key(s.target, s.block)].push_back(all.share());
}

std::byte* software_cache::checkout(int target, std::uint64_t offset, std::size_t bytes, access mode, token& t) {
  const std::size_t block = config_.block;
  const std::uint64_t first = offset / block;
  const std::size_t n = static_cast<std::size_t>((offset + bytes - 1) / block - first + 1);
  if (n > slots_.size())
    fail(describe(target, offset, bytes) + ": spans " + std::to_string(n) + " blocks of " + std::to_string(block) +
         " bytes, more than the cache holds (" + std::to_string(slots_.size()) +
         " blocks; --weft:cache-size and --weft:cache-block set it)");
  // The slots of its blocks: a few mostly, kept on the stack.
  std::array<std::uint32_t, 8> few;
  std::vector<std::uint32_t> many(n > few.size() ? n : 0);
  const std::span<std::uint32_t> held = n > few.size() ? std::span(many) : std::span(few).first(n);
  // Every slot pinned is mostly a passing state: tasks of this rank that
  // suspended while their own checkouts fill (many of them when steals bring
  // in tasks while gets are on their way across nodes) check theirs in once
  // the bytes arrive. So wait for a slot, letting this worker's other tasks
  // run; only checkouts that stay held (across a wait for something else)
  // make it last, and then the job ends saying so.
  std::optional<std::chrono::steady_clock::time_point> started;  // the first wait
  for (bool first_try = true;; first_try = false) {
    std::optional<int> pinned;
    {
      std::lock_guard g(mutex_);
      if (first_try) {
        map_storage();
        ++stats_.cached_checkouts;
      }
      pinned = pin_blocks(target, first, offset, bytes, held);
    }
    if (!pinned) break;
    const auto now = std::chrono::steady_clock::now();
    if (!started) started = now;
    if (std::chrono::duration<double>(now - *started).count() > full_cache_wait_s)
      fail(describe(target, offset, bytes) + ": needs " + std::to_string(n) + " cache blocks, but live checkouts of rank " +
           std::to_string(me_) + " hold " + std::to_string(*pinned) + " of its " + std::to_string(slots_.size()) +
           " and none was checked in for " + std::to_string(static_cast<int>(full_cache_wait_s)) +
           " s (check some in first, or raise --weft:cache-size)");
    if (weft::detail::on_worker())
      weft::this_task::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  fill(target, held, offset, bytes, mode);
  t.cached = true;
  const std::size_t into = static_cast<std::size_t>(offset - first * block);
  if (n == 1) return memory(held[0]) + into;
  return map_side_by_side(target, first, held, t) + into;
}

// Read and read_write: fetch every missing byte of the sub-blocks the
// checkout touches (not the whole block: at every fork-join steal an
// acquire forgets what a block held, and refetching 64 KiB for a few bytes
// cost more than a short task), waiting first for a fill already on its
// way or for a write-back of the block still on its way (else the fetch could overtake
// it and return older data). Write: mark the checked-out bytes valid at once
// so that no fetch started meanwhile lands on them, after any fill in flight.
void software_cache::fill(int target, std::span<const std::uint32_t> held, std::uint64_t offset,
                          std::size_t bytes, access mode) {
  for (;;) {
    std::vector<shared_future<void>> waits;
    {
      std::lock_guard g(mutex_);
      for (std::uint32_t i : held) {
        slot& s = slots_[i];
        settle(s);
        if (s.fill.valid()) {
          waits.push_back(s.fill);
          continue;
        }
        const std::uint64_t begin = s.block * config_.block;
        const std::uint64_t end = std::min<std::uint64_t>(begin + config_.block, segment_);
        const auto part = part_in_block(offset, bytes, begin, end - begin);
        if (mode == access::write) {
          s.valid.add(part.begin, part.end);
          continue;
        }
        const std::size_t sub = config_.sub_block;
        const auto gaps = s.valid.gaps(part.begin / sub * sub,
                                       std::min<std::size_t>((part.end + sub - 1) / sub * sub, end - begin));
        if (gaps.empty()) continue;
        if (auto w = write_backs_.find(key(s.target, s.block)); w != write_backs_.end()) {
          std::erase_if(w->second, [](const shared_future<void>& f) { return f.is_ready(); });
          if (!w->second.empty()) {
            waits.insert(waits.end(), w->second.begin(), w->second.end());
            continue;
          }
          write_backs_.erase(w);
        }
        std::vector<future<void>> gets;  // those by message
        std::vector<byte_ranges::range> filling;
        const weft::rma::detail::racing_reads sub_block_fetch;  // see tests/tsan.supp
        for (const auto& r : gaps) {
          // Complete at once (the heap is mapped here, or one-sided gets):
          // valid now, with no future to make and settle.
          if (weft::detail::pgas::get_bytes_at_once(target, begin + r.begin, memory(i) + r.begin, r.end - r.begin)) {
            s.valid.add(r.begin, r.end);
          } else {
            gets.push_back(
                weft::detail::pgas::get_bytes_by_message(target, begin + r.begin, memory(i) + r.begin, r.end - r.begin));
            filling.push_back(r);
          }
          ++stats_.fetches;
          stats_.fetched_bytes += r.end - r.begin;
        }
        if (gets.empty()) continue;
        s.fill = all_of(std::move(gets)).share();
        s.filling = std::move(filling);
        s.fill_epoch = acquires_;
        settle(s);
        if (s.fill.valid()) waits.push_back(s.fill);
      }
    }
    if (waits.empty()) return;
    for (const auto& w : waits) w.get();
  }
}

namespace {
/// Maps `block` bytes of the memory file `fd` from `file_offset` at `at`,
/// replacing what was there.
void map_slot_at(std::byte* at, std::size_t block, int fd, std::size_t file_offset, int rank) {
  void* p = mmap(at, block, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, static_cast<off_t>(file_offset));
  if (p == MAP_FAILED) fail("software cache of rank " + std::to_string(rank) + ": " + sys_error("mmap"));
}
/// Places of stale shadow mappings kept, per slot of the cache: past it
/// they are unmapped (each mapping is one of the process's limited memory
/// areas, vm.max_map_count).
constexpr std::size_t stale_shadow_places_per_slot = 4;
}  // namespace

std::byte* software_cache::shadow_of(int target) {
  auto [it, fresh] = shadows_.try_emplace(target, nullptr);
  if (fresh) {
    // Address space only: no memory, no page tables until mapped.
    void* p = mmap(nullptr, blocks_per_heap_ * config_.block, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p != MAP_FAILED) it->second = static_cast<std::byte*>(p);
  }
  return it->second;
}

void software_cache::drop_stale_shadow_mappings() {
  const std::size_t block = config_.block;
  for (auto it = shadow_slot_.begin(); it != shadow_slot_.end();) {
    const auto held = where_.find(it->first);
    if (held != where_.end() && held->second == it->second) {
      ++it;
      continue;
    }
    const int target = static_cast<int>(it->first / blocks_per_heap_);
    std::byte* at = shadows_.at(target) + it->first % blocks_per_heap_ * block;
    if (mmap(at, block, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
      fail("software cache of rank " + std::to_string(me_) + ": " + sys_error("mmap"));
    it = shadow_slot_.erase(it);
  }
}

std::byte* software_cache::map_side_by_side(int target, std::uint64_t first, std::span<const std::uint32_t> held,
                                            token& t) {
  const std::size_t block = config_.block;
  {
    std::lock_guard g(mutex_);
    if (std::byte* shadow = shadow_of(target)) {
      for (std::size_t k = 0; k < held.size(); ++k) {
        auto [it, fresh] = shadow_slot_.try_emplace(key(target, first + k), held[k]);
        if (!fresh && it->second == held[k]) continue;  // mapped there since an earlier checkout
        map_slot_at(shadow + (first + k) * block, block, fd_, std::size_t{held[k]} * block, me_);
        it->second = held[k];
      }
      if (shadow_slot_.size() > stale_shadow_places_per_slot * slots_.size()) drop_stale_shadow_mappings();
      return shadow + first * block;
    }
  }
  // No address space for a shadow (a heap too large to mirror): a region
  // of the checkout's own, unmapped at check-in.
  const std::size_t bytes = held.size() * block;
  void* region = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) fail("software cache of rank " + std::to_string(me_) + ": " + sys_error("mmap"));
  auto* at = static_cast<std::byte*>(region);
  for (std::size_t k = 0; k < held.size(); ++k) map_slot_at(at + k * block, block, fd_, std::size_t{held[k]} * block, me_);
  t.alias = at;
  t.alias_bytes = bytes;
  return at;
}

void software_cache::checkin(const token& t) {
  if (t.alias != nullptr) munmap(t.alias, t.alias_bytes);
  const std::size_t block = config_.block;
  const std::uint64_t first = t.offset / block, last = (t.offset + t.bytes - 1) / block;
  std::lock_guard g(mutex_);
  for (std::uint64_t b = first; b <= last; ++b) {
    slot& s = slots_[where_.at(key(t.rank, b))];  // pinned: still there
    const auto part = part_in_block(t.offset, t.bytes, b * block, block);
    if (t.mode != access::read) {
      s.dirty.add(part.begin, part.end);
      s.valid.add(part.begin, part.end);
    }
    const auto mine = std::find_if(s.checked_out.begin(), s.checked_out.end(), [&](const byte_ranges::range& h) {
      return h.begin == part.begin && h.end == part.end;
    });
    s.checked_out.erase(mine);  // one of equal entries is as good as another
    --s.pins;
  }
}

void software_cache::release() {
  if (!used_.load(std::memory_order_acquire)) return;  // fence() in programs without cached checkouts
  std::vector<shared_future<void>> waits;
  {
    std::lock_guard g(mutex_);
    for (std::uint32_t i : in_use_)
      if (!slots_[i].dirty.empty()) write_back(i);
    // Entries stay until they are seen ready: a fetch of their block
    // meanwhile still waits for them.
    for (auto it = write_backs_.begin(); it != write_backs_.end();) {
      auto& in_flight = it->second;
      std::erase_if(in_flight, [](const shared_future<void>& f) { return f.is_ready(); });
      waits.insert(waits.end(), in_flight.begin(), in_flight.end());
      it = in_flight.empty() ? write_backs_.erase(it) : std::next(it);
    }
  }
  for (const auto& w : waits) w.get();
}

void software_cache::acquire() {
  if (!used_.load(std::memory_order_acquire)) return;
  std::lock_guard g(mutex_);
  for (std::uint32_t i : in_use_) settle(slots_[i]);
  ++acquires_;  // fills still on their way are stale
  std::erase_if(in_use_, [&](std::uint32_t i) {
    slot& s = slots_[i];
    forget_clean(s);
    if (!s.valid.empty() || s.pins != 0 || s.fill.valid()) return false;
    where_.erase(key(s.target, s.block));
    s.target = -1;
    empty_.push_back(i);
    return true;
  });
}

std::size_t software_cache::dirty_bytes() {
  if (!used_.load(std::memory_order_acquire)) return 0;
  std::lock_guard g(mutex_);
  std::size_t n = 0;
  for (std::uint32_t i : in_use_) n += slots_[i].dirty.bytes();
  return n;
}

weft::cache_statistics software_cache::stats() {
  std::lock_guard g(mutex_);
  weft::cache_statistics s = stats_;
  s.direct_checkouts = direct_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace weft::pgas::detail
