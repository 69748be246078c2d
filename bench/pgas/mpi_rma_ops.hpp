// The MPI RMA column of bench_pgas: one MPI_Win_allocate window of 16 MiB
// per rank, opened with MPI_Win_lock_all for the whole repetition, and a
// second 16-byte window for MPI_Win_lock (exclusive locks cannot be taken
// inside lock_all).
//
//   put / get         MPI_Put / MPI_Get + MPI_Win_flush
//   bandwidth         MPI_Put of each piece, then one MPI_Win_flush
//   fetch-add         MPI_Fetch_and_op(MPI_SUM, int64) + MPI_Win_flush
//   lock              MPI_Win_lock(exclusive, 1) + MPI_Win_unlock
//   lock + put        the same with an 8-byte MPI_Put inside
//   contended lock    both ranks: MPI_Win_lock(exclusive, 0) + MPI_Win_unlock
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rma_ops.hpp"

namespace pgas_bench {

class mpi_rma final : public rma_ops {
 public:
  explicit mpi_rma(int me) : me_(me), src_(static_cast<std::size_t>(window_bytes), 1), dst_(src_.size(), 0) {
    MPI_Win_allocate(window_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base_, &win_);
    std::memset(base_, 0, static_cast<std::size_t>(window_bytes));
    MPI_Win_allocate(2 * sizeof(std::int64_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &lock_base_, &lock_win_);
    std::memset(lock_base_, 0, 2 * sizeof(std::int64_t));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win_);
  }
  ~mpi_rma() override {
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&lock_win_);
    MPI_Win_free(&win_);
  }
  mpi_rma(const mpi_rma&) = delete;
  mpi_rma& operator=(const mpi_rma&) = delete;

  double put_latency_us(long bytes, long iters) override {
    return timed(iters, [&] {
      MPI_Put(src_.data(), static_cast<int>(bytes), MPI_BYTE, target, 0, static_cast<int>(bytes), MPI_BYTE, win_);
      MPI_Win_flush(target, win_);
    });
  }
  double get_latency_us(long bytes, long iters) override {
    return timed(iters, [&] {
      MPI_Get(dst_.data(), static_cast<int>(bytes), MPI_BYTE, target, 0, static_cast<int>(bytes), MPI_BYTE, win_);
      MPI_Win_flush(target, win_);
    });
  }
  double put_bandwidth_gbs(long bytes, long total) override {
    const double us = timed(1, [&] {
      for (long off = 0; off < total; off += bytes)
        MPI_Put(src_.data() + off % window_bytes, static_cast<int>(bytes), MPI_BYTE, target, off % window_bytes,
                static_cast<int>(bytes), MPI_BYTE, win_);
      MPI_Win_flush(target, win_);
    });
    return me_ == 0 ? static_cast<double>(total) / us / 1e3 : 0;
  }
  double fetch_add_us(long iters) override {
    const std::int64_t one = 1;
    std::int64_t old = 0;
    return timed(iters, [&] {
      MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, 0, MPI_SUM, win_);
      MPI_Win_flush(target, win_);
    });
  }
  double lock_unlock_us(long iters) override {
    return timed(iters, [&] {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, lock_win_);
      MPI_Win_unlock(target, lock_win_);
    });
  }
  double lock_put_unlock_us(long iters) override {
    return timed(iters, [&] {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, lock_win_);
      MPI_Put(src_.data(), 8, MPI_BYTE, target, 0, 8, MPI_BYTE, lock_win_);
      MPI_Win_unlock(target, lock_win_);
    });
  }
  contended lock_contended(long iters) override {
    double own = 0;
    const double us = timed(iters, [&] {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, lock_win_);
      MPI_Win_unlock(0, lock_win_);
    }, true, &own);
    double fastest = 0, slowest = 0;
    MPI_Allreduce(&own, &fastest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&own, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return {us, fastest / slowest};
  }
  std::string verify() override {
    std::string problem;
    if (me_ == 0) problem = verify_put_get_fetch_add();
    // Both ranks increment rank 0's second lock word by get + put under the
    // exclusive lock: a lost update would show a broken mutual exclusion.
    constexpr int increments = 200;
    std::int64_t zero = 0, v = 0;
    if (me_ == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, lock_win_);
      MPI_Put(&zero, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, lock_win_);
      MPI_Win_unlock(0, lock_win_);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < increments; ++i) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, lock_win_);
      MPI_Get(&v, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, lock_win_);
      MPI_Win_flush(0, lock_win_);
      ++v;
      MPI_Put(&v, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, lock_win_);
      MPI_Win_unlock(0, lock_win_);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me_ == 0 && problem.empty()) {
      MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, lock_win_);
      MPI_Get(&v, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, lock_win_);
      MPI_Win_unlock(0, lock_win_);
      if (v != 2 * increments)
        problem = "increments under the lock: " + std::to_string(v) + " instead of " + std::to_string(2 * increments);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return problem;
  }

 private:
  static constexpr int target = 1;

  template <class Op>
  double timed(long iters, Op op, bool all_ranks = false, double* own_us = nullptr) {
    return timed_us(me_, 2, iters, all_ranks, [] { MPI_Barrier(MPI_COMM_WORLD); }, op, own_us);
  }

  std::string verify_put_get_fetch_add() {
    constexpr int n = 65536;
    for (int i = 0; i < n; ++i) src_[static_cast<std::size_t>(i)] = static_cast<char>(i * 7 + 3);
    MPI_Put(src_.data(), n, MPI_BYTE, target, 0, n, MPI_BYTE, win_);
    MPI_Win_flush(target, win_);
    MPI_Get(dst_.data(), n, MPI_BYTE, target, 0, n, MPI_BYTE, win_);
    MPI_Win_flush(target, win_);
    if (std::memcmp(src_.data(), dst_.data(), n) != 0) return "a 64 KiB put did not read back by get";
    std::int64_t zero = 0, old = 0;
    const std::int64_t one = 1;
    MPI_Put(&zero, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T, win_);
    MPI_Win_flush(target, win_);
    for (int i = 0; i < 100; ++i) {
      MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, 0, MPI_SUM, win_);
      MPI_Win_flush(target, win_);
      if (old != i) return "fetch-add returned " + std::to_string(old) + ", expected " + std::to_string(i);
    }
    return "";
  }

  int me_;
  std::vector<char> src_, dst_;
  void* base_ = nullptr;
  void* lock_base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL, lock_win_ = MPI_WIN_NULL;
};

}  // namespace pgas_bench
