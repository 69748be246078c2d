// Allocation and address translation.
#include <algorithm>
#include <array>
#include <new>
#include <stdexcept>
#include <string>

#include "pgas/state.hpp"
#include "weft/coll.hpp"
#include "weft/pgas.hpp"

namespace weft::detail::pgas {

using namespace weft::pgas::detail;

namespace {

class heap_exhausted : public std::bad_alloc {
 public:
  explicit heap_exhausted(std::string what) : what_(std::move(what)) {}
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

/// The size an allocation asked for, and its byte count: false when that
/// does not fit in 64 bits (heap exhaustion, whatever the heap's size).
bool size_in_bytes(std::size_t count, std::size_t element_bytes, std::size_t& bytes, std::string& asked) {
  const bool fits = !__builtin_mul_overflow(count, element_bytes, &bytes);
  if (fits)
    asked = std::to_string(bytes) + " bytes";
  else
    asked = std::to_string(count) + " elements of " + std::to_string(element_bytes) + " bytes";
  return fits;
}

std::string usage(const rank_pgas& r) {
  return "the heap of rank " + std::to_string(r.rank) + " has " + std::to_string(r.space.size()) + " bytes, " +
         std::to_string(r.space.symmetric_in_use()) + " in symmetric and " + std::to_string(r.space.local_in_use()) +
         " in rank-local blocks; --weft:segment sets the size";
}

}  // namespace

std::byte* address_of(int rank, std::uint64_t offset, bool /*for_access*/) noexcept {
  process_pgas& p = process();
  if (rank < 0 || rank >= p.nranks || offset >= p.segment) return nullptr;
  return view(p, rank, offset);
}

bool locate(const void* ptr, int& rank, std::uint64_t& offset) noexcept {
  process_pgas& p = process();
  const auto* b = static_cast<const std::byte*>(ptr);
  for (int r = 0; r < p.nranks; ++r) {
    const std::byte* base = p.views[static_cast<std::size_t>(r)];
    if (base != nullptr && b >= base && b < base + p.segment) {
      rank = r;
      offset = static_cast<std::uint64_t>(b - base);
      return true;
    }
  }
  return false;
}

int this_rank() noexcept { return weft::pgas::detail::current_comm().rank; }

std::uint64_t allocate_symmetric(std::size_t count, std::size_t element_bytes) {
  rank_pgas& me = current();
  std::size_t bytes = 0;
  std::string asked;
  if (!size_in_bytes(count, element_bytes, bytes, asked))
    fail("symmetric allocation of " + asked + ": heap exhausted (more bytes than 64 bits hold); " + usage(me));
  // Every rank must ask for the same size: compare the extremes (and keep
  // ranks from using a block before its owner allocated it).
  using extremes = std::array<std::size_t, 2>;  // the smallest size and the complement of the largest
  const extremes e = weft::allreduce(extremes{bytes, ~bytes}, [](extremes a, extremes b) {
    return extremes{std::min(a[0], b[0]), std::min(a[1], b[1])};
  });
  const std::size_t lo = e[0], hi = ~e[1];
  if (lo != hi)
    fail("symmetric allocation with different sizes on different ranks (between " + std::to_string(lo) + " and " +
         std::to_string(hi) + " bytes; this rank asked for " + std::to_string(bytes) + ")");
  const auto at = me.space.allocate_symmetric(bytes);
  if (!at) fail("symmetric allocation of " + asked + ": heap exhausted; " + usage(me));
  return *at;
}

void free_symmetric(std::uint64_t offset) {
  rank_pgas& me = current();
  weft::barrier();  // nobody still accesses the block anywhere
  if (!me.space.free_symmetric(offset))
    fail("free of a symmetric block at heap offset " + std::to_string(offset) + " of rank " +
         std::to_string(me.rank) + ", which is not a live symmetric block");
}

std::uint64_t allocate_local(std::size_t count, std::size_t element_bytes) {
  rank_pgas& me = current();
  std::size_t bytes = 0;
  std::string asked;
  const bool fits = size_in_bytes(count, element_bytes, bytes, asked);
  const auto at = fits ? me.space.allocate_local(bytes) : std::nullopt;
  if (!at)
    throw heap_exhausted("weft: rank " + std::to_string(me.rank) + ": pgas allocation of " + asked +
                         ": heap exhausted" + (fits ? "" : " (more bytes than 64 bits hold)") + "; " + usage(me));
  return *at;
}

void free_local(int rank, std::uint64_t offset) {
  rank_pgas& me = current();
  if (rank != me.rank)
    fail("rank " + std::to_string(me.rank) + " frees a block of rank " + std::to_string(rank) +
         " (only the rank that allocated a block frees it)");
  if (!me.space.free_local(offset))
    fail("free of heap offset " + std::to_string(offset) + " on rank " + std::to_string(me.rank) +
         ", which is not a live block from allocate");
}

std::uint64_t dist_register(void* object) {
  rank_pgas& me = current();
  std::lock_guard g(me.objects_mutex);
  const std::uint64_t id = me.next_object++;
  me.objects.emplace(id, object);
  return id;
}

void* dist_lookup(std::uint64_t id, int from) {
  rank_pgas& me = current();
  std::lock_guard g(me.objects_mutex);
  auto it = me.objects.find(id);
  if (it == me.objects.end())
    fail("rank " + std::to_string(from) + " fetches dist_object " + std::to_string(id) + " of rank " +
         std::to_string(me.rank) + ", which does not exist there (constructed in a different order, or destroyed)");
  return it->second;
}

void dist_unregister(std::uint64_t id) {
  rank_pgas& me = current();
  std::lock_guard g(me.objects_mutex);
  me.objects.erase(id);
}

}  // namespace weft::detail::pgas
