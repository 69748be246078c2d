// The weft columns of bench_pgas: weft's global memory (weft/pgas.hpp) on a
// 16 MiB symmetric block per rank. Runs inside weft::run on both ranks.
//
//   put / get         weft::put / weft::get of a span, then .get() on its future
//   bandwidth         weft::put of each piece (futures dropped), then weft::fence()
//   fetch-add         weft::atomic_fetch_add(int64).get()
//   lock              global_lock::of_rank(1): lock() + unlock()
//   lock + put        the same with weft::put of 8 bytes inside (unlock()
//                     waits for it, as MPI_Win_unlock completes MPI_Put)
//   contended lock    both ranks: global_lock::of_rank(0) lock() + unlock()
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "rma_ops.hpp"
#include "weft/pgas.hpp"
#include "weft/weft.hpp"

namespace pgas_bench {

class weft_rma final : public rma_ops {
 public:
  weft_rma()
      : me_(weft::rank()),
        src_(static_cast<std::size_t>(window_bytes), 1),
        dst_(src_.size(), 0),
        block_(weft::allocate_symmetric<char>(static_cast<std::size_t>(window_bytes))),
        words_(weft::allocate_symmetric<std::int64_t>(3)) {
    // Touch the pages now, as the MPI column's memset does: the heap is
    // backed page by page on first use, and a first touch inside a timing
    // would measure the kernel.
    std::memset(block_.local(), 0, static_cast<std::size_t>(window_bytes));
    std::memset(words_.local(), 0, 3 * sizeof(std::int64_t));
    weft::barrier();
  }
  ~weft_rma() override {
    weft::free_symmetric(words_);  // collective, with a barrier first
    weft::free_symmetric(block_);
  }
  weft_rma(const weft_rma&) = delete;
  weft_rma& operator=(const weft_rma&) = delete;

  double put_latency_us(long bytes, long iters) override {
    const std::span<const char> src(src_.data(), static_cast<std::size_t>(bytes));
    return timed(iters, [&] { weft::put(block_.on(target), src).get(); });
  }
  double get_latency_us(long bytes, long iters) override {
    const std::span<char> dst(dst_.data(), static_cast<std::size_t>(bytes));
    return timed(iters, [&] { weft::get(block_.on(target), dst).get(); });
  }
  double put_bandwidth_gbs(long bytes, long total) override {
    const double us = timed(1, [&] {
      for (long off = 0; off < total; off += bytes) {
        const long at = off % window_bytes;
        // Dropped: weft::fence() below is the completion.
        (void)weft::put(block_.on(target) + at,
                        std::span<const char>(src_.data() + at, static_cast<std::size_t>(bytes)));
      }
      weft::fence();
    });
    return me_ == 0 ? static_cast<double>(total) / us / 1e3 : 0;
  }
  double fetch_add_us(long iters) override {
    const auto counter = words_.on(target);
    return timed(iters, [&] { (void)weft::atomic_fetch_add(counter, std::int64_t{1}).get(); });
  }
  double lock_unlock_us(long iters) override {
    weft::global_lock l = weft::global_lock::of_rank(target);
    return timed(iters, [&] {
      l.lock();
      l.unlock();
    });
  }
  double lock_put_unlock_us(long iters) override {
    weft::global_lock l = weft::global_lock::of_rank(target);
    const std::int64_t value = 42;
    return timed(iters, [&] {
      l.lock();
      (void)weft::put(words_.on(target) + 1, value);  // unlock() waits for it
      l.unlock();
    });
  }
  contended lock_contended(long iters) override {
    weft::global_lock l = weft::global_lock::of_rank(0);
    double own = 0;
    const double us = timed(iters, [&] {
      l.lock();
      l.unlock();
    }, true, &own);
    using extremes = std::array<double, 2>;  // the fastest loop time, minus the slowest
    const extremes e = weft::allreduce(extremes{own, -own}, [](extremes a, extremes b) {
      return extremes{std::min(a[0], b[0]), std::min(a[1], b[1])};
    });
    return {us, e[0] / -e[1]};
  }
  std::string verify() override {
    std::string problem;
    if (me_ == 0) problem = verify_put_get_fetch_add();
    // Both ranks increment rank 0's third word by get + put under rank 0's
    // lock: a lost update would show a broken mutual exclusion.
    constexpr int increments = 200;
    const auto shared = words_.on(0) + 2;
    if (me_ == 0) *shared.local() = 0;
    weft::barrier();
    weft::global_lock l = weft::global_lock::of_rank(0);
    for (int i = 0; i < increments; ++i) {
      l.lock();
      const std::int64_t v = weft::get(shared).get();
      weft::put(shared, v + 1).get();
      l.unlock();
    }
    weft::barrier();
    if (me_ == 0 && problem.empty() && *shared.local() != 2 * increments)
      problem = "increments under the lock: " + std::to_string(*shared.local()) + " instead of " +
                std::to_string(2 * increments);
    weft::barrier();
    return problem;
  }

 private:
  static constexpr int target = 1;

  template <class Op>
  double timed(long iters, Op op, bool all_ranks = false, double* own_us = nullptr) {
    return timed_us(me_, 2, iters, all_ranks, [] { weft::barrier(); }, op, own_us);
  }

  std::string verify_put_get_fetch_add() {
    constexpr std::size_t n = 65536;
    for (std::size_t i = 0; i < n; ++i) src_[i] = static_cast<char>(i * 7 + 3);
    weft::put(block_.on(target), std::span<const char>(src_.data(), n)).get();
    weft::get(block_.on(target), std::span<char>(dst_.data(), n)).get();
    if (std::memcmp(src_.data(), dst_.data(), n) != 0) return "a 64 KiB put did not read back by get";
    const auto counter = words_.on(target);
    weft::put(counter, std::int64_t{0}).get();
    for (std::int64_t i = 0; i < 100; ++i) {
      const std::int64_t old = weft::atomic_fetch_add(counter, std::int64_t{1}).get();
      if (old != i) return "fetch-add returned " + std::to_string(old) + ", expected " + std::to_string(i);
    }
    return "";
  }

  int me_;
  std::vector<char> src_, dst_;
  weft::global_ptr<char> block_;
  weft::global_ptr<std::int64_t> words_;  // fetch-add counter, lock + put target, verify counter
};

}  // namespace pgas_bench
