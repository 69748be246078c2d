// What bench_pgas measures: the operations of a global-memory layer as an
// interface (rma_ops) that every system implements, the list of operations
// and sizes, and one repetition of all of them (measure_all).
#pragma once
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "comm_common.hpp"

namespace pgas_bench {

using comm_bench::clk;
using comm_bench::seconds_since;

/// The measured operations between rank 0 (origin) and rank 1 (target).
/// Every function runs on both ranks and returns rank 0's figure; rank 1
/// only waits in barriers, except in lock_contended.
class rma_ops {
 public:
  virtual ~rma_ops() = default;
  /// One put of `bytes`, then its completion at the target; per pair.
  virtual double put_latency_us(long bytes, long iters) = 0;
  virtual double get_latency_us(long bytes, long iters) = 0;
  /// `total` bytes as puts of `bytes` each, then one completion; GB/s.
  virtual double put_bandwidth_gbs(long bytes, long total) = 0;
  /// fetch-add of an int64 on rank 1, with the old value back.
  virtual double fetch_add_us(long iters) = 0;
  /// Rank 0 takes and releases rank 1's lock; nobody else wants it.
  virtual double lock_unlock_us(long iters) = 0;
  virtual double lock_put_unlock_us(long iters) = 0;
  /// Both ranks take and release rank 0's lock `iters` times each, at once.
  struct contended {
    double per_acquire_us;  // wall time until both finished / all acquisitions
    double overlap;         // the faster rank's loop time / the slower one's
  };
  virtual contended lock_contended(long iters) = 0;
  /// "" when a put reads back by get, fetch-add counts and increments under
  /// the lock from both ranks lose nothing; else what failed.
  virtual std::string verify() = 0;
};

enum class operation { put, get, bandwidth, fetch_add, lock, lock_put, lock_contended, lock_overlap };

struct operation_info {
  operation op;
  const char* name;
  const char* unit;
  bool sized;  // one row per size
};
constexpr std::array<operation_info, 8> operations = {{
    {operation::put, "put + completion latency", "us", true},
    {operation::get, "get + completion latency", "us", true},
    {operation::bandwidth, "put bandwidth (16 MiB as puts of the size, then one completion)", "GB/s", true},
    {operation::fetch_add, "fetch-add int64 + completion latency", "us", false},
    {operation::lock, "exclusive lock + unlock latency, uncontended (rank 0 takes rank 1's lock)", "us", false},
    {operation::lock_put, "exclusive lock + 8 B put + unlock latency, uncontended", "us", false},
    {operation::lock_contended,
     "exclusive lock + unlock, both ranks contending for rank 0's lock; wall time / all acquisitions", "us", false},
    {operation::lock_overlap,
     "contended lock: the faster rank's loop time / the slower rank's (near 1: the ranks alternate; near 0: one "
     "rank's loop ran before the other's got the lock)",
     "ratio", false},
}};

constexpr long window_bytes = 16L << 20;
constexpr long bandwidth_total = 16L << 20;

struct plan {
  std::vector<long> latency_sizes, bandwidth_sizes;
  long iters = 2000;
  bool trace = false;  // --trace 1: every rank names each measurement on stderr before it starts

  long iters_for(long bytes) const { return std::max(20L, bytes <= 4096 ? iters : iters * 4096 / bytes); }
};

/// Microseconds per operation, returned on rank 0 (0 elsewhere). all_ranks
/// false: rank 0 calls `op` `iters` times while the others wait in
/// `barrier`. all_ranks true: every rank calls it `iters` times at once,
/// timed until the last one finished, per call of all ranks together;
/// `own_us` then gets this rank's own loop time.
template <class Barrier, class Op>
double timed_us(int me, int nranks, long iters, bool all_ranks, Barrier barrier, Op op, double* own_us = nullptr) {
  barrier();
  const auto t0 = clk::now();
  if (all_ranks || me == 0)
    for (long i = 0; i < iters; ++i) op();
  if (own_us) *own_us = seconds_since(t0) * 1e6;
  if (all_ranks) barrier();
  const double us = seconds_since(t0) * 1e6 / static_cast<double>(iters * (all_ranks ? nranks : 1));
  if (!all_ranks) barrier();
  return me == 0 ? us : 0;
}

/// Ends the whole job: under mpiexec every process, else this one.
[[noreturn]] inline void fail_job(const std::string& what) {
  std::fprintf(stderr, "bench_pgas: %s\n", what.c_str());
  std::fflush(stderr);
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  if (mpi_up) MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

/// One repetition of every measurement on `ops`, recorded under `system`
/// on rank 0 (the only rank that records, also when ranks share a process).
inline void measure_all(rma_ops& ops, const std::string& system, const plan& p, int me) {
  if (p.trace) std::fprintf(stderr, "bench_pgas: rank %d: %s: verify\n", me, system.c_str());
  const std::string problem = ops.verify();
  if (!problem.empty()) fail_job("rank " + std::to_string(me) + ": " + system + ": " + problem);
  auto keep = [&](operation op, long size, double v) {
    if (me == 0) comm_bench::record(system, size, static_cast<long>(op), v);
  };
  auto next = [&](const char* what, long size) {
    if (p.trace) std::fprintf(stderr, "bench_pgas: rank %d: %s: %s %ld\n", me, system.c_str(), what, size);
  };
  // Untimed: the first touch of the target's pages through this process's
  // mapping (page faults) belongs to setting up, in every column alike.
  next("warm-up", 1L << 20);
  ops.put_bandwidth_gbs(1L << 20, bandwidth_total);
  for (long s : p.latency_sizes) {
    next("put", s);
    keep(operation::put, s, ops.put_latency_us(s, p.iters_for(s)));
  }
  for (long s : p.latency_sizes) {
    next("get", s);
    keep(operation::get, s, ops.get_latency_us(s, p.iters_for(s)));
  }
  for (long s : p.bandwidth_sizes) {
    next("bandwidth", s);
    keep(operation::bandwidth, s, ops.put_bandwidth_gbs(s, bandwidth_total));
  }
  next("fetch-add", 8);
  keep(operation::fetch_add, 8, ops.fetch_add_us(p.iters));
  next("lock", 0);
  keep(operation::lock, 0, ops.lock_unlock_us(p.iters));
  next("lock + put", 8);
  keep(operation::lock_put, 8, ops.lock_put_unlock_us(p.iters));
  next("contended lock", 0);
  const rma_ops::contended c = ops.lock_contended(p.iters);
  keep(operation::lock_contended, 0, c.per_acquire_us);
  keep(operation::lock_overlap, 0, c.overlap);
}

}  // namespace pgas_bench
