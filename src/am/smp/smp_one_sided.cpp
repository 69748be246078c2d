#include "am/smp/smp_one_sided.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sched/scheduler.hpp"

namespace weft::detail {

namespace {

[[noreturn]] void one_sided_misuse(const char* text) noexcept {
  fatal_handler(text);
  std::abort();
}

}  // namespace

smp_region_table::~smp_region_table() {
  for (auto& r : regions_) delete[] r.load(std::memory_order_relaxed);
}

std::uint64_t smp_region_table::add(int rank, int nranks, void* base, std::size_t bytes) {
  std::lock_guard g(mutex_);
  if (registered_.empty()) {
    registered_.assign(static_cast<std::size_t>(nranks), 0);
    nranks_.store(nranks, std::memory_order_release);
  }
  const std::uint64_t key = registered_[static_cast<std::size_t>(rank)]++;
  if (key >= max_regions) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "rank %d registers more than %zu one-sided regions", rank, max_regions);
    one_sided_misuse(msg);
  }
  region* by_rank = regions_[key].load(std::memory_order_relaxed);
  if (by_rank == nullptr) {
    by_rank = new region[static_cast<std::size_t>(nranks)];
    regions_[key].store(by_rank, std::memory_order_release);
  }
  by_rank[rank] = {static_cast<std::byte*>(base), bytes};
  return key;
}

const smp_region_table::region& smp_region_table::at(int rank, std::uint64_t key) const {
  static const region none;
  if (rank < 0 || rank >= nranks_.load(std::memory_order_acquire) || key >= max_regions) return none;
  const region* by_rank = regions_[key].load(std::memory_order_acquire);
  return by_rank == nullptr ? none : by_rank[rank];
}

one_sided_ops::region_key smp_one_sided::register_region(void* base, std::size_t bytes) {
  return table_.add(rank_, nranks_, base, bytes);
}

std::byte* smp_one_sided::address(int rank, region_key region, std::size_t offset, std::size_t n,
                                  const char* op) const {
  const smp_region_table::region& r = table_.at(rank, region);
  if (r.base == nullptr || offset > r.bytes || n > r.bytes - offset) [[unlikely]] {
    char msg[200];
    std::snprintf(msg, sizeof msg, "one-sided %s from rank %d to rank %d, region %llu bytes [%zu, +%zu): %s", op,
                  rank_, rank, static_cast<unsigned long long>(region), offset, n,
                  r.base == nullptr ? "no such region" : "out of bounds");
    one_sided_misuse(msg);
  }
  return r.base + offset;
}

std::uint64_t& smp_one_sided::word(int rank, region_key region, std::size_t offset, const char* op) const {
  std::byte* p = address(rank, region, offset, sizeof(std::uint64_t), op);
  if (offset % alignof(std::uint64_t) != 0) [[unlikely]] {
    char msg[160];
    std::snprintf(msg, sizeof msg, "one-sided %s from rank %d to rank %d at region offset %zu: not 8-byte aligned",
                  op, rank_, rank, offset);
    one_sided_misuse(msg);
  }
  return *reinterpret_cast<std::uint64_t*>(p);
}

void smp_one_sided::put(int rank, region_key region, std::size_t offset, const void* src, std::size_t n) {
  if (n != 0) std::memcpy(address(rank, region, offset, n, "put"), src, n);
}

void smp_one_sided::get(int rank, region_key region, std::size_t offset, void* dst, std::size_t n) {
  if (n != 0) std::memcpy(dst, address(rank, region, offset, n, "get"), n);
}

std::uint64_t smp_one_sided::fetch_add(int rank, region_key region, std::size_t offset, std::uint64_t add) {
  return std::atomic_ref<std::uint64_t>(word(rank, region, offset, "fetch_add")).fetch_add(add);
}

std::uint64_t smp_one_sided::compare_swap(int rank, region_key region, std::size_t offset, std::uint64_t expected,
                                          std::uint64_t desired) {
  std::atomic_ref<std::uint64_t>(word(rank, region, offset, "compare_swap")).compare_exchange_strong(expected, desired);
  return expected;
}

std::uint64_t smp_one_sided::swap(int rank, region_key region, std::size_t offset, std::uint64_t value) {
  return std::atomic_ref<std::uint64_t>(word(rank, region, offset, "swap")).exchange(value);
}

}  // namespace weft::detail
