// Internal: the pgas layer's state — per process, which ranks' heaps this
// process can address (those on its ranks' nodes: all ranks of the smp
// backend unless --weft:node-size cuts the process into nodes; the ranks of
// this node on the mpi backend), and per local rank its heap's bookkeeping, its
// operations in flight and the locks it owns.
#pragma once
#include <cstddef>
#include <cstdint>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <string>
#include <vector>

#include "am/rank_comm.hpp"
#include "pgas/heap_space.hpp"
#include "pgas/lock_table.hpp"
#include "pgas/op_counter.hpp"
#include "pgas/software_cache.hpp"

namespace weft::pgas::detail {

using weft::detail::rank_comm;

struct rank_pgas {
  rank_pgas(int r, std::size_t size) : rank(r), space(size) {}
  const int rank;
  heap_space space;
  std::byte* base = nullptr;  // this rank's heap in this process (set once, at the start)
  op_counter in_flight[3];  // by weft::detail::pgas::kind
  lock_table locks;
  std::mutex objects_mutex;  // dist_object registry
  std::unordered_map<std::uint64_t, void*> objects;
  std::uint64_t next_object = 0;
  std::unique_ptr<software_cache> cache;         // checkouts of memory reached by messages
  // Where views are by rank (process_pgas::views_by_rank): by world rank,
  // whether that rank is on this rank's node, found once rather than by
  // asking the transport at every access.
  std::vector<std::uint8_t> on_node;
  // Direct and cached, not yet checked in. Changed at every checkout and
  // check-in: on a cache line of its own, away from the other ranks' state.
  alignas(64) std::atomic<std::int64_t> live_checkouts{0};
};

/// One heap mapped into this process, unmapped at the end.
struct mapping {
  void* base = nullptr;
  std::size_t bytes = 0;
};

struct process_pgas {
  std::size_t segment = 0;  // every rank's heap size
  // Some ranks of this process are on different nodes (smp with
  // --weft:node-size): a view then serves only the ranks whose transport
  // puts its heap on their node; the others reach it as if remote.
  bool views_by_rank = false;
  cache_config cache;       // every rank's software cache
  int first_rank = 0;
  int nranks = 1;
  std::vector<std::byte*> views;  // by world rank: its heap here, or null
  std::vector<std::unique_ptr<rank_pgas>> local;
  std::vector<mapping> maps;
};

/// The process's state; ends the job if the runtime is not running.
process_pgas& process();

/// The calling rank's state and communication context.
rank_pgas& current();
rank_comm& current_comm();

/// The state of rank `r` if it lives in this process, else nullptr.
rank_pgas* in_process(int r) noexcept;

/// The calling rank's state, or nullptr on a thread that is no rank's.
rank_pgas* caller_state() noexcept;

/// The address of heap byte `offset` of rank `r` for the rank `me`, or
/// null when `me` reaches it by messages (another node).
inline std::byte* view_for(const process_pgas& p, const rank_pgas& me, int r, std::uint64_t offset) noexcept {
  std::byte* b = p.views[static_cast<std::size_t>(r)];
  if (b == nullptr || (p.views_by_rank && me.on_node[static_cast<std::size_t>(r)] == 0)) return nullptr;
  return b + offset;
}

/// view_for() the calling rank; where views are by rank, null on a thread
/// that is no rank's.
inline std::byte* view(const process_pgas& p, int r, std::uint64_t offset) noexcept {
  if (!p.views_by_rank) {
    std::byte* b = p.views[static_cast<std::size_t>(r)];
    return b != nullptr ? b + offset : nullptr;
  }
  const rank_pgas* me = caller_state();
  return me != nullptr ? view_for(p, *me, r, offset) : nullptr;
}

/// Ends the job with "pgas <text>" naming the calling rank.
[[noreturn]] void fail(const std::string& text) noexcept;

/// Checks `rank` exists and [offset, offset + bytes) lies in its heap;
/// ends the job naming both ranks, the range and the heap size otherwise
/// (range_checks.cpp).
void check_range(const char* op, int origin, int rank, std::uint64_t offset, std::size_t bytes);

/// The cache options' rules beyond their limits (checkout.cpp): a block is
/// a multiple of the page size, the cache at least one block.
void check_cache_config(const cache_config& c);
/// At finalize: ends the job if rank `r` still holds a checkout or has
/// dirty cached bytes it never released.
void check_cache_at_end(rank_pgas& r);
/// Ends the job if `r` holds a checkout during `what` (a release, acquire
/// or fence).
void require_no_checkouts(rank_pgas& r, const char* what);

}  // namespace weft::pgas::detail
