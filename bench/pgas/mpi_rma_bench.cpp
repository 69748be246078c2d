// One-sided communication between two ranks: the operations a global-memory
// layer offers (DiOMP's ompx_put/ompx_get + ompx_waitRMA, remote atomics,
// ompx_lock/ompx_unlock), measured on MPI RMA.
//
//   mpiexec.mpich -n 2 -bind-to core bench_mpi_rma [--reps N] [--quick] [--csv FILE]
//                                                  [--iters K] [--max-size BYTES]
//
// Rank 0 acts, rank 1 is the passive target (it waits in MPI_Barrier).
// MPI side: one MPI_Win_allocate window of 16 MiB per rank, opened with
// MPI_Win_lock_all for the whole run; a second, 8-byte window for
// MPI_Win_lock (exclusive locks cannot be taken inside lock_all).
//
//   put latency       MPI_Put of `size` bytes + MPI_Win_flush, per pair
//   get latency       MPI_Get + MPI_Win_flush
//   put bandwidth     16 MiB as puts of `size` bytes to consecutive places,
//                     then one MPI_Win_flush; GB/s = bytes / time
//   fetch-add         MPI_Fetch_and_op(MPI_SUM, int64) + MPI_Win_flush
//   lock              MPI_Win_lock(exclusive) + MPI_Win_unlock, uncontended
//   lock + put        the same with an 8-byte MPI_Put inside
//
// --iters K: operations per latency measurement for sizes up to 4 KiB
// (default 2000; larger sizes do proportionally fewer, at least 20).
// Repetitions run every system, operation and size in turn (interleaved,
// so a drift of the host shows in every row alike); cells are the median
// over repetitions with [min-max]. Every repetition also checks that a put
// reads back by get and that fetch-add returns consecutive values.
//
// Systems: a system brings itself up for one repetition and hands the
// measurements an rma_ops; another system (weft's global memory) is one
// more entry in `systems` and becomes one more column.
//
// CSV (appended): bench,system,operation,size_bytes,reps,median,min,max,unit
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "comm_common.hpp"

namespace {

using namespace comm_bench;

// ---- what is measured ---------------------------------------------------------

/// The measured operations. Every function runs on both ranks (rank 1 only
/// takes part in the barriers) and returns rank 0's figure.
class rma_ops {
 public:
  virtual ~rma_ops() = default;
  virtual double put_latency_us(long bytes, long iters) = 0;
  virtual double get_latency_us(long bytes, long iters) = 0;
  /// `total` bytes as puts of `bytes` each, then one completion; GB/s.
  virtual double put_bandwidth_gbs(long bytes, long total) = 0;
  virtual double fetch_add_us(long iters) = 0;
  virtual double lock_unlock_us(long iters) = 0;
  virtual double lock_put_unlock_us(long iters) = 0;
  /// "" when a put reads back by get and fetch-add counts, else what failed.
  virtual std::string verify() = 0;
};

enum class operation { put, get, bandwidth, fetch_add, lock, lock_put };

struct operation_info {
  operation op;
  const char* name;
  const char* unit;
  bool sized;  // one row per size
};
constexpr std::array<operation_info, 6> operations = {{
    {operation::put, "put + flush latency", "us", true},
    {operation::get, "get + flush latency", "us", true},
    {operation::bandwidth, "put bandwidth (puts, then one flush)", "GB/s", true},
    {operation::fetch_add, "fetch-add int64 + flush latency", "us", false},
    {operation::lock, "exclusive lock + unlock latency, uncontended", "us", false},
    {operation::lock_put, "exclusive lock + 8 B put + unlock latency, uncontended", "us", false},
}};

constexpr long window_bytes = 16L << 20;
constexpr long bandwidth_total = 16L << 20;

struct plan {
  std::vector<long> latency_sizes, bandwidth_sizes;
  long iters = 2000;

  long iters_for(long bytes) const { return std::max(20L, bytes <= 4096 ? iters : iters * 4096 / bytes); }
};

/// One repetition of every measurement on `ops`, recorded under `system`.
void measure_all(rma_ops& ops, const std::string& system, const plan& p, int me) {
  const std::string problem = ops.verify();
  if (!problem.empty()) {
    std::fprintf(stderr, "bench_mpi_rma: rank %d: %s: %s\n", me, system.c_str(), problem.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  auto keep = [&](operation op, long size, double v) {
    if (me == 0) record(system, size, static_cast<long>(op), v);
  };
  for (long s : p.latency_sizes) keep(operation::put, s, ops.put_latency_us(s, p.iters_for(s)));
  for (long s : p.latency_sizes) keep(operation::get, s, ops.get_latency_us(s, p.iters_for(s)));
  for (long s : p.bandwidth_sizes) keep(operation::bandwidth, s, ops.put_bandwidth_gbs(s, bandwidth_total));
  keep(operation::fetch_add, 8, ops.fetch_add_us(p.iters));
  keep(operation::lock, 0, ops.lock_unlock_us(p.iters));
  keep(operation::lock_put, 8, ops.lock_put_unlock_us(p.iters));
}

// ---- MPI RMA ----------------------------------------------------------------

class mpi_rma final : public rma_ops {
 public:
  explicit mpi_rma(int me) : me_(me), src_(static_cast<std::size_t>(window_bytes), 1), dst_(src_.size(), 0) {
    MPI_Win_allocate(window_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base_, &win_);
    std::memset(base_, 0, static_cast<std::size_t>(window_bytes));
    MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &lock_base_, &lock_win_);
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
    return timed_us(iters, [&] {
      MPI_Put(src_.data(), static_cast<int>(bytes), MPI_BYTE, target, 0, static_cast<int>(bytes), MPI_BYTE, win_);
      MPI_Win_flush(target, win_);
    });
  }
  double get_latency_us(long bytes, long iters) override {
    return timed_us(iters, [&] {
      MPI_Get(dst_.data(), static_cast<int>(bytes), MPI_BYTE, target, 0, static_cast<int>(bytes), MPI_BYTE, win_);
      MPI_Win_flush(target, win_);
    });
  }
  double put_bandwidth_gbs(long bytes, long total) override {
    const double us = timed_us(1, [&] {
      for (long off = 0; off < total; off += bytes)
        MPI_Put(src_.data() + off % window_bytes, static_cast<int>(bytes), MPI_BYTE, target, off % window_bytes,
                static_cast<int>(bytes), MPI_BYTE, win_);
      MPI_Win_flush(target, win_);
    });
    return static_cast<double>(total) / us / 1e3;
  }
  double fetch_add_us(long iters) override {
    const std::int64_t one = 1;
    std::int64_t old = 0;
    return timed_us(iters, [&] {
      MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, 0, MPI_SUM, win_);
      MPI_Win_flush(target, win_);
    });
  }
  double lock_unlock_us(long iters) override {
    return timed_us(iters, [&] {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, lock_win_);
      MPI_Win_unlock(target, lock_win_);
    });
  }
  double lock_put_unlock_us(long iters) override {
    return timed_us(iters, [&] {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, lock_win_);
      MPI_Put(src_.data(), 8, MPI_BYTE, target, 0, 8, MPI_BYTE, lock_win_);
      MPI_Win_unlock(target, lock_win_);
    });
  }
  std::string verify() override {
    std::string problem;
    if (me_ == 0) {
      constexpr int n = 65536;
      for (int i = 0; i < n; ++i) src_[static_cast<std::size_t>(i)] = static_cast<char>(i * 7 + 3);
      MPI_Put(src_.data(), n, MPI_BYTE, target, 0, n, MPI_BYTE, win_);
      MPI_Win_flush(target, win_);
      MPI_Get(dst_.data(), n, MPI_BYTE, target, 0, n, MPI_BYTE, win_);
      MPI_Win_flush(target, win_);
      if (std::memcmp(src_.data(), dst_.data(), n) != 0) problem = "a 64 KiB put did not read back by get";
      std::int64_t zero = 0, old = 0;
      const std::int64_t one = 1;
      MPI_Put(&zero, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T, win_);
      MPI_Win_flush(target, win_);
      for (int i = 0; i < 100 && problem.empty(); ++i) {
        MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, 0, MPI_SUM, win_);
        MPI_Win_flush(target, win_);
        if (old != i) problem = "fetch-add returned " + std::to_string(old) + ", expected " + std::to_string(i);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return problem;
  }

 private:
  static constexpr int target = 1;

  /// Microseconds per call of `op` over `iters` calls on rank 0.
  template <class Op>
  double timed_us(long iters, Op op) {
    MPI_Barrier(MPI_COMM_WORLD);
    double us = 0;
    if (me_ == 0) {
      const auto t0 = clk::now();
      for (long i = 0; i < iters; ++i) op();
      us = seconds_since(t0) * 1e6 / static_cast<double>(iters);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return us;
  }

  int me_;
  std::vector<char> src_, dst_;
  void* base_ = nullptr;
  void* lock_base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL, lock_win_ = MPI_WIN_NULL;
};

// ---- systems ----------------------------------------------------------------

/// A system runs one repetition: it brings itself up, hands its rma_ops
/// to `measure`, and tears down (a system that needs a runtime running
/// starts it here, as comm_common's run_weft does).
struct rma_system {
  const char* name;
  std::function<void(int me, const std::function<void(rma_ops&)>& measure)> repetition;
};

const std::vector<rma_system> systems_measured = {
    {"mpi", [](int me, const std::function<void(rma_ops&)>& measure) {
       mpi_rma ops(me);
       measure(ops);
     }},
};

// ---- output -----------------------------------------------------------------

std::string cell(const stats& s, const char* unit) {
  if (!s.ok) return "-";
  char b[96];
  const bool gbs = std::strcmp(unit, "GB/s") == 0;
  std::snprintf(b, sizeof b, gbs ? "%.2f [%.2f-%.2f]" : "%.3f [%.3f-%.3f]", s.med, s.lo, s.hi);
  return b;
}

void print_tables(const options& o, const plan& p) {
  const std::vector<std::string> names = systems();
  std::printf("bench_mpi_rma: 2 ranks, %d repetitions; median [min-max]\n", o.reps);
  FILE* csv = open_csv(o.csv, "bench,system,operation,size_bytes,reps,median,min,max,unit");
  for (const operation_info& info : operations) {
    std::printf("\n%s, %s\n\n|%s", info.name, info.unit, info.sized ? " size |" : "");
    for (const std::string& n : names) std::printf(" %s |", n.c_str());
    std::printf("\n|%s", info.sized ? "---|" : "");
    for (std::size_t i = 0; i < names.size(); ++i) std::printf("---|");
    std::printf("\n");
    std::vector<long> sizes = {info.op == operation::lock ? 0L : 8L};
    if (info.op == operation::put || info.op == operation::get) sizes = p.latency_sizes;
    if (info.op == operation::bandwidth) sizes = p.bandwidth_sizes;
    for (long size : sizes) {
      std::printf("|");
      if (info.sized) std::printf(" %s |", size_name(size).c_str());
      for (const std::string& n : names) {
        const stats s = summarize(n, size, static_cast<long>(info.op));
        std::printf(" %s |", cell(s, info.unit).c_str());
        if (csv && s.ok)
          std::fprintf(csv, "rma,%s,%s,%ld,%d,%g,%g,%g,%s\n", n.c_str(), info.name, size, o.reps, s.med, s.lo, s.hi,
                       info.unit);
      }
      std::printf("\n");
    }
  }
  if (csv) std::fclose(csv);
}

}  // namespace

int main(int argc, char** argv) {
  long iters = 2000, max_size = 4L << 20;
  const char* usage =
      "usage: mpiexec.mpich -n 2 -bind-to core bench_mpi_rma [--reps N] [--quick] [--csv FILE] [--iters K] "
      "[--max-size BYTES]\n";
  options o = parse_options(argc, argv, {{"--iters", &iters}, {"--max-size", &max_size}}, usage);
  MPI_Init(&argc, &argv);
  int me = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n != 2 || iters < 1 || max_size < 8 || max_size > window_bytes) {
    if (me == 0)
      std::fprintf(stderr, "bench_mpi_rma: rank 0: needs mpiexec -n 2 (got %d ranks), --iters >= 1, 8 <= --max-size <= %ld\n%s",
                   n, window_bytes, usage);
    MPI_Finalize();
    return 2;
  }
  plan p;
  p.iters = o.quick ? std::min(iters, 200L) : iters;
  for (long s = 8; s <= max_size; s *= o.quick ? 8 : 2) p.latency_sizes.push_back(s);
  for (long s = 64 << 10; s <= max_size; s *= o.quick ? 4 : 2) p.bandwidth_sizes.push_back(s);

  for (int r = 0; r < o.reps; ++r) {
    if (me == 0) std::fprintf(stderr, "\rbench_mpi_rma: repetition %d/%d", r + 1, o.reps);
    for (const rma_system& s : systems_measured) s.repetition(me, [&](rma_ops& ops) { measure_all(ops, s.name, p, me); });
  }
  if (me == 0) {
    std::fprintf(stderr, "\n");
    print_tables(o, p);
  }
  MPI_Finalize();
  return 0;
}
