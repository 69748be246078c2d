// Allreduce latency: weft's collectives against MPI_Allreduce and against
// a linear algorithm (every rank sends to rank 0, which
// combines and sends the result back to each), measured in the same run.
//
//   8 B     one double, weft::allreduce(x, std::plus<>{})
//   1 MiB   131072 doubles, weft::allreduce(std::move(v), weft::elementwise{std::plus<>{}})
//           (linear: the same vectors added whole at rank 0)
//
// Mode mpi (under mpiexec -n N): each repetition runs MPI_Allreduce on
// MPI_COMM_WORLD, then starts weft on the same processes (its mpi backend)
// and runs weft's tree and linear allreduce. Mode smp (one process): weft's
// tree and linear allreduce on --weft:ranks ranks (default 64, one worker
// each unless --weft:threads says otherwise). A measurement is the time of
// `iters` allreduces in a row on rank 0, started after a barrier, divided by
// iters; the table gives median [min-max] over the repetitions.
//
//   bench_allreduce [--reps N] [--quick] [--csv FILE] [--mode auto|mpi|smp]
//                   [--iters-small K] [--iters-large K] [--weft:...]
//
// CSV (appended): bench,system,size_bytes,ranks,iters,reps,median_us,min_us,max_us
#include <cmath>
#include <functional>
#include <stdexcept>

#include "comm_common.hpp"

namespace {

using namespace comm_bench;

constexpr long small_bytes = 8;
constexpr long large_bytes = 1 << 20;
constexpr std::size_t large_count = large_bytes / sizeof(double);

struct config {
  long iters_small = 200;
  long iters_large = 20;
  int ranks = 0;
  long iters(long size) const { return size == small_bytes ? iters_small : iters_large; }
};
config cfg;

/// The linear algorithm, as weft had it: kept here only as the baseline.
template <class T, class Op>
T linear_allreduce(const T& value, Op op) {
  namespace d = weft::detail;
  const std::uint64_t seq = d::collective_begin();
  const int me = weft::rank(), n = weft::nranks();
  if (me != 0) {
    d::collective_send(0, seq, 0, d::to_bytes(value));
    return d::from_bytes<T>(d::collective_expect(seq, 1, 1).get()[0]);
  }
  auto parts = d::collective_expect(seq, 0, n - 1).get();
  T acc = value;
  for (int r = 1; r < n; ++r) acc = op(std::move(acc), d::from_bytes<T>(parts[static_cast<std::size_t>(r)]));
  for (int r = 1; r < n; ++r) d::collective_send(r, seq, 1, d::to_bytes(acc));
  return acc;
}

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("bench_allreduce: wrong result from ") + what);
}

// ---- raw MPI --------------------------------------------------------------

void raw_pass(int me) {
  std::vector<double> in(large_count, 1.0), out(large_count);
  for (long size : {small_bytes, large_bytes}) {
    const int count = static_cast<int>(size / static_cast<long>(sizeof(double)));
    const long k = cfg.iters(size);
    MPI_Allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);  // warm-up
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = clk::now();
    for (long i = 0; i < k; ++i) MPI_Allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double s = seconds_since(t0);
    check(out[0] == static_cast<double>(cfg.ranks), "MPI_Allreduce");
    if (me == 0) record("mpi", size, cfg.ranks, s / static_cast<double>(k) * 1e6);
  }
}

// ---- weft -----------------------------------------------------------------

/// Runs `k` allreduces of `size` bytes with the tree (or linear) algorithm;
/// returns the seconds rank 0 measured.
double weft_once(long size, long k, bool linear) {
  const double n = weft::nranks();
  weft::barrier();
  const auto t0 = clk::now();
  if (size == small_bytes) {
    double x = 0;
    for (long i = 0; i < k; ++i)
      x = linear ? linear_allreduce(1.0, std::plus<>{}) : weft::allreduce(1.0, std::plus<>{});
    check(x == n, "weft allreduce (8 B)");
  } else {
    // The vector is reduced in place (moved in, returned): after k rounds
    // every element is n^k, exact in a double for the k and n used here.
    std::vector<double> v(large_count, 1.0);
    for (long i = 0; i < k; ++i)
      v = linear ? linear_allreduce(v, weft::elementwise{std::plus<>{}})
                 : weft::allreduce(std::move(v), weft::elementwise{std::plus<>{}});
    const double expect = std::pow(n, static_cast<double>(k));
    check(v.size() == large_count && v.front() == expect && v.back() == expect, "weft allreduce (1 MiB)");
  }
  return seconds_since(t0);
}

void weft_pass(const std::string& system) {
  weft_once(small_bytes, 2, false);  // warm-up: fiber stacks, message buffers
  weft_once(large_bytes, 1, false);
  for (long size : {small_bytes, large_bytes})
    for (bool linear : {false, true}) {
      const long k = cfg.iters(size);
      const double s = weft_once(size, k, linear);
      if (weft::rank() == 0) record(linear ? system + "-linear" : system, size, cfg.ranks, s / static_cast<double>(k) * 1e6);
    }
}

void run_weft_pass(const options& o) {
  std::vector<std::string> args = {o.prog};
  args.insert(args.end(), o.weft_args.begin(), o.weft_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  const int rc = weft::run(argc, argv.data(), [] {
    if (weft::rank() == 0) cfg.ranks = weft::nranks();  // read by rank 0 only
    weft_pass(std::string("weft-") + weft::backend_name());
  });
  if (rc != 0) std::exit(rc);
}

// ---- report ---------------------------------------------------------------

void report(const options& o) {
  const auto sys = systems();
  const std::string base = sys.front() == "mpi" ? "mpi" : sys.back();  // mpi, else the linear baseline
  std::printf("\nallreduce latency in us on %d ranks, median [min-max] of %d runs\n\n", cfg.ranks, o.reps);
  std::printf("| size |");
  for (auto& s : sys) std::printf(" %s us |", s.c_str());
  for (auto& s : sys)
    if (s != base) std::printf(" %s/%s |", s.c_str(), base.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < 2 * sys.size() - 1; ++i) std::printf("---|");
  std::printf("\n");
  FILE* csv = open_csv(o.csv, "bench,system,size_bytes,ranks,iters,reps,median_us,min_us,max_us");
  for (long size : {small_bytes, large_bytes}) {
    std::printf("| %s |", size_name(size).c_str());
    for (auto& s : sys) {
      const stats st = summarize(s, size, cfg.ranks);
      std::printf(" %.1f [%.1f-%.1f] |", st.med, st.lo, st.hi);
      if (csv)
        std::fprintf(csv, "allreduce,%s,%ld,%d,%ld,%d,%.3f,%.3f,%.3f\n", s.c_str(), size, cfg.ranks, cfg.iters(size),
                     o.reps, st.med, st.lo, st.hi);
    }
    const double b = summarize(base, size, cfg.ranks).med;
    for (auto& s : sys)
      if (s != base) std::printf(" %.2f |", summarize(s, size, cfg.ranks).med / b);
    std::printf("\n");
  }
  if (csv) std::fclose(csv);
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: bench_allreduce [--reps N] [--quick] [--csv FILE] [--mode auto|mpi|smp] [--iters-small K]"
      " [--iters-large K] [--weft:...]\n";
  long iters_small = -1, iters_large = -1;
  options o = parse_options(argc, argv, {{"--iters-small", &iters_small}, {"--iters-large", &iters_large}}, usage);
  cfg.iters_small = iters_small > 0 ? iters_small : (o.quick ? 20 : 200);
  cfg.iters_large = iters_large > 0 ? iters_large : (o.quick ? 3 : 20);
  if (o.mode == "smp") {
    bool has_ranks = false, has_threads = false;
    for (auto& a : o.weft_args) {
      has_ranks |= a.rfind("--weft:ranks=", 0) == 0;
      has_threads |= a.rfind("--weft:threads=", 0) == 0;
    }
    if (!has_ranks) o.weft_args.push_back("--weft:ranks=64");
    if (!has_threads) o.weft_args.push_back("--weft:threads=1");
    for (int r = 0; r < o.reps; ++r) {
      std::fprintf(stderr, "\rbench_allreduce (smp): repetition %d/%d", r + 1, o.reps);
      run_weft_pass(o);
    }
    std::fprintf(stderr, "\n");
    report(o);
    return 0;
  }
  int provided = 0, me = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &cfg.ranks);
  for (int r = 0; r < o.reps; ++r) {
    if (me == 0) std::fprintf(stderr, "\rbench_allreduce (mpi): repetition %d/%d", r + 1, o.reps);
    raw_pass(me);
    run_weft_pass(o);
  }
  if (me == 0) std::fprintf(stderr, "\n");
  MPI_Finalize();
  if (me == 0) report(o);
  return 0;
}
