// Internal: one-sided operations of the smp backend. Every rank lives in
// this process, so a put or get is a memcpy into or out of the target's
// registered region, an atomic is a CPU atomic (std::atomic_ref) on the
// target's word, and a flush is a fence: everything is complete when the
// call returns. The layers above use it to exercise, inside one process,
// the path they take to memory they cannot map.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "am/transport.hpp"

namespace weft::detail {

/// The regions every rank of one smp world registered, by key and rank.
/// Keys are counted per rank: a rank's k-th registration has key k, so
/// ranks that register in the same order agree on the keys.
class smp_region_table {
 public:
  static constexpr std::size_t max_regions = 64;
  struct region {
    std::byte* base = nullptr;
    std::size_t bytes = 0;
  };

  smp_region_table() = default;
  ~smp_region_table();
  smp_region_table(const smp_region_table&) = delete;
  smp_region_table& operator=(const smp_region_table&) = delete;

  /// Records rank `rank`'s next region (of `nranks` in the world); returns
  /// its key.
  std::uint64_t add(int rank, int nranks, void* base, std::size_t bytes);
  /// Rank `rank`'s region `key` (ends the job when it was never registered).
  const region& at(int rank, std::uint64_t key) const;

 private:
  std::mutex mutex_;                    // registration only
  std::vector<std::uint64_t> registered_;  // by rank: regions so far
  std::atomic<int> nranks_{0};
  // By key: one array of nranks_ regions, made by the first rank that
  // registers that key; lookups read it without the mutex.
  std::atomic<region*> regions_[max_regions] = {};
};

/// One rank's view of the table (one per smp_transport).
class smp_one_sided final : public one_sided_ops {
 public:
  smp_one_sided(smp_region_table& table, int rank, int nranks) : table_(table), rank_(rank), nranks_(nranks) {}

  region_key register_region(void* base, std::size_t bytes) override;
  void put(int rank, region_key region, std::size_t offset, const void* src, std::size_t n) override;
  void get(int rank, region_key region, std::size_t offset, void* dst, std::size_t n) override;
  std::uint64_t fetch_add(int rank, region_key region, std::size_t offset, std::uint64_t add) override;
  std::uint64_t compare_swap(int rank, region_key region, std::size_t offset, std::uint64_t expected,
                             std::uint64_t desired) override;
  std::uint64_t swap(int rank, region_key region, std::size_t offset, std::uint64_t value) override;
  /// Every operation completed when it returned: a fence orders them with
  /// what the caller does next.
  void flush(int) override { std::atomic_thread_fence(std::memory_order_seq_cst); }
  void flush_all() override { std::atomic_thread_fence(std::memory_order_seq_cst); }
  /// Plain loads, stores and CPU atomics of the calling thread.
  bool target_passive() const noexcept override { return true; }

 private:
  /// The address of bytes [offset, offset + n) of (rank, region); ends the
  /// job when they are not all inside it.
  std::byte* address(int rank, region_key region, std::size_t offset, std::size_t n, const char* op) const;
  /// The same for a 64-bit word, which must be 8-byte aligned.
  std::uint64_t& word(int rank, region_key region, std::size_t offset, const char* op) const;

  smp_region_table& table_;
  const int rank_;
  const int nranks_;
};

}  // namespace weft::detail
