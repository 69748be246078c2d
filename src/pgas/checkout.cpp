// checkout/checkin, cache_release/cache_acquire, and the rules about held
// checkouts (docs/PGAS.md "Software cache").
#include <string>

#include <unistd.h>

#include "pgas/state.hpp"
#include "weft/detail/task.hpp"
#include "weft/checkout.hpp"
#include "weft/coll.hpp"

namespace weft::pgas::detail {

void check_cache_config(const cache_config& c) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (c.block % page != 0)
    fail("software cache: --weft:cache-block=" + std::to_string(c.block) + " is not a multiple of the page size (" +
         std::to_string(page) + " bytes)");
  if (c.size < c.block)
    fail("software cache: --weft:cache-size=" + std::to_string(c.size) + " is smaller than one block (--weft:cache-block=" +
         std::to_string(c.block) + ")");
}

void require_no_checkouts(rank_pgas& r, const char* what) {
  const std::int64_t held = r.live_checkouts.load(std::memory_order_acquire);
  if (held != 0)
    fail(std::string(what) + " by rank " + std::to_string(r.rank) + " while it holds " + std::to_string(held) +
         " checkout(s); check them in first (no checkout may be held across a release, an acquire, a fence or "
         "the end of the program)");
}

void check_cache_at_end(rank_pgas& r) {
  require_no_checkouts(r, "finalize");
  if (const std::size_t dirty = r.cache->dirty_bytes(); dirty != 0)
    fail("rank " + std::to_string(r.rank) + " ends with " + std::to_string(dirty) +
         " bytes written through checkouts that never went back to their owners; call weft::cache_release() or "
         "weft::fence() after writing");
}

}  // namespace weft::pgas::detail

namespace weft::detail::pgas {

using namespace weft::pgas::detail;

std::byte* checkout_bytes(int rank, std::uint64_t offset, std::size_t bytes, access mode, checkout_token& token) {
  rank_pgas& me = current();
  check_range("checkout", me.rank, rank, offset, bytes);
  me.live_checkouts.fetch_add(1, std::memory_order_relaxed);
  ++weft::detail::held_by_current_task();
  token = checkout_token{&me, rank, offset, bytes, mode, false, nullptr, 0};
  if (bytes == 0) return nullptr;
  if (!me.cache->config().always)
    if (std::byte* heap = view_for(process(), me, rank, offset)) {
      me.cache->count_direct();
      return heap;
    }
  return me.cache->checkout(rank, offset, bytes, mode, token);
}

void checkin_bytes(checkout_token& token) {
  auto& me = *static_cast<rank_pgas*>(token.owner);
  if (token.cached) me.cache->checkin(token);
  me.live_checkouts.fetch_sub(1, std::memory_order_release);
  --weft::detail::held_by_current_task();
}

// At task boundaries other tasks of the rank may hold checkouts: only the
// task crossing the boundary must hold none (forkjoin checks that). Their
// bytes are not dirty until checked in, so writing back what is dirty and
// forgetting what is clean leaves them intact (a pinned slot keeps its bytes).
void task_boundary_release() { current().cache->release(); }
void task_boundary_acquire() { current().cache->acquire(); }

/// fence() releases too (transfer.cpp).
void cache_release_for(const char* what) {
  rank_pgas& me = current();
  require_no_checkouts(me, what);
  me.cache->release();
}

}  // namespace weft::detail::pgas

namespace weft {

void cache_release() { detail::pgas::cache_release_for("cache_release"); }

void cache_acquire() {
  auto& me = weft::pgas::detail::current();
  weft::pgas::detail::require_no_checkouts(me, "cache_acquire");
  me.cache->acquire();
}

void cache_barrier() {
  cache_release();
  barrier();
  cache_acquire();
}

cache_statistics cache_stats() { return weft::pgas::detail::current().cache->stats(); }

}  // namespace weft
