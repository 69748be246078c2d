// One-sided communication between two ranks — the operations of a
// global-memory layer (DiOMP's ompx_put/ompx_get + ompx_waitRMA, remote
// atomics, ompx_lock/ompx_unlock) — on weft's global memory
// (weft/pgas.hpp) and on MPI RMA, in the same run.
//
//   mpiexec.mpich -n 2 -bind-to core bench_pgas [--reps N] [--quick] [--csv FILE] [--ucx]
//                 [--iters K] [--max-size BYTES] [--trace 1] [--weft:...]
//   bench_pgas --mode=smp [same options]       (one process, 2 weft ranks as threads)
//   bench/pgas/run_pgas_bench.sh               (both, interleaved, one merged table)
//
// Systems (columns), each brought up afresh in every repetition:
//   mpi            MPI RMA on an MPI_Win_allocate window (mpi_rma_ops.hpp)
//   weft-mpi       weft on the mpi backend; the two ranks share a node, so
//                  puts, gets and atomics are loads and stores through the
//                  shared mapping (the direct path; locks are messages)
//   weft-mpi-msg   the same with --weft:node-size=1 and
//                  WEFT_PGAS_ONE_SIDED=0: everything travels as active
//                  messages through MPI
//   weft-mpi-1s    --weft:node-size=1 alone: the transport's one-sided
//                  operations where it has them (docs/PGAS.md), else messages
//   weft-ucx-msg   (--ucx) weft on the ucx backend, --weft:node-size=1 and
//                  WEFT_PGAS_ONE_SIDED=0: everything travels as UCP active
//                  messages
//   weft-ucx-1s    (--ucx) the ucx backend, --weft:node-size=1 and
//                  --weft:ucx-rma=on: UCP puts, gets and atomics (between
//                  processes of one host UCX emulates them with messages
//                  the target's worker answers; docs/DISTRIBUTED.md)
//   weft-smp       (--mode=smp) weft's smp backend: 2 ranks as threads of one
//                  process, direct path (and locks by direct calls)
//   weft-smp-msg   (--mode=smp) the same with --weft:node-size=1 and
//                  WEFT_PGAS_ONE_SIDED=0 (messages)
//   weft-smp-1s    (--mode=smp) --weft:node-size=1 alone: the smp
//                  backend's one-sided operations (memcpy, CPU atomics, and
//                  locks as MCS queue locks on them)
// (The ucx backend's same-node column would repeat weft-mpi's loads and
// stores through the shared mapping, so --ucx adds only the two paths
// between nodes.)
// Under mpiexec a repetition runs mpi, weft-mpi, weft-mpi-msg in turn
// (interleaved, so a drift of the host shows in every column alike); the
// ratio columns divide a weft median by the mpi median of the same row.
// The smp columns come from a separate process: run_pgas_bench.sh
// alternates the two invocations and merges their CSV files.
//
// Rank 0 acts, rank 1 is the passive target (it waits in a barrier), except
// in the contended lock. --iters K: operations per latency measurement for
// sizes up to 4 KiB (default 2000; larger sizes proportionally fewer, at
// least 20). --trace 1: every rank names each measurement on stderr before
// it starts (to find where a run stops). Every repetition first checks each system: a 64 KiB put reads
// back by get, 100 fetch-adds return consecutive values, and 200
// get-increment-put sequences per rank under rank 0's lock lose no update.
//
// CSV (appended; operation quoted): bench,system,operation,size_bytes,reps,median,min,max,unit
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mpi_rma_ops.hpp"
#include "rma_ops.hpp"
#include "weft_rma_ops.hpp"

namespace {

using namespace pgas_bench;
using namespace comm_bench;

/// A column: one repetition brings the system up, measures, tears down.
struct rma_system {
  // "mpi": needs mpiexec and MPI initialized; "any": weft; "ucx": weft's
  // ucx backend, only with --ucx (it needs mpiexec too)
  const char* mode;
  std::function<void(const options&, const plan&)> repetition;
};

/// `one_sided`: false sets WEFT_PGAS_ONE_SIDED=0 for this run (the message
/// path where the heaps are not mapped); every process of a job sets the same.
void measure_weft(const options& o, const plan& p, const std::vector<std::string>& extra, const std::string& suffix,
                  bool one_sided = true) {
  auto body = [&](const std::string& system) {
    weft_rma ops;
    measure_all(ops, system, p, weft::rank());
  };
  if (one_sided) unsetenv("WEFT_PGAS_ONE_SIDED");
  else setenv("WEFT_PGAS_ONE_SIDED", "0", 1);
  run_weft(o, body, extra, suffix);
  unsetenv("WEFT_PGAS_ONE_SIDED");
}

const std::vector<rma_system> systems_measured = {
    {"mpi",
     [](const options&, const plan& p) {
       int me = 0;
       MPI_Comm_rank(MPI_COMM_WORLD, &me);
       mpi_rma ops(me);
       measure_all(ops, "mpi", p, me);
     }},
    {"any", [](const options& o, const plan& p) { measure_weft(o, p, {}, ""); }},
    {"any", [](const options& o, const plan& p) { measure_weft(o, p, {"--weft:node-size=1"}, "-msg", false); }},
    {"any", [](const options& o, const plan& p) { measure_weft(o, p, {"--weft:node-size=1"}, "-1s"); }},
    {"ucx",
     [](const options& o, const plan& p) {
       measure_weft(o, p, {"--weft:backend=ucx", "--weft:node-size=1"}, "-msg", false);
     }},
    {"ucx",
     [](const options& o, const plan& p) {
       measure_weft(o, p, {"--weft:backend=ucx", "--weft:node-size=1", "--weft:ucx-rma=on"}, "-1s");
     }},
};

bool wanted(const rma_system& s, const options& o) {
  if (std::strcmp(s.mode, "any") == 0) return true;
  if (o.mode != "mpi") return false;
  return std::strcmp(s.mode, "mpi") == 0 || o.ucx;
}

// ---- output -----------------------------------------------------------------

std::string cell(const stats& s, bool gbs) {
  if (!s.ok) return "-";
  char b[96];
  std::snprintf(b, sizeof b, gbs ? "%.2f [%.2f-%.2f]" : "%.3f [%.3f-%.3f]", s.med, s.lo, s.hi);
  return b;
}

std::vector<long> sizes_of(const operation_info& info, const plan& p) {
  if (info.op == operation::put || info.op == operation::get) return p.latency_sizes;
  if (info.op == operation::bandwidth) return p.bandwidth_sizes;
  const bool sizeless =
      info.op == operation::lock || info.op == operation::lock_contended || info.op == operation::lock_overlap;
  return {sizeless ? 0L : 8L};
}

void print_tables(const options& o, const plan& p) {
  const std::vector<std::string> names = systems();
  const bool have_mpi = !names.empty() && names.front() == "mpi";
  std::printf("bench_pgas: 2 ranks, %d repetitions; median [min-max]", o.reps);
  if (have_mpi) std::printf("; X/mpi = median of X / median of mpi in the same row");
  std::printf("\n");
  FILE* csv = open_csv(o.csv, "bench,system,operation,size_bytes,reps,median,min,max,unit");
  for (const operation_info& info : operations) {
    const bool gbs = std::strcmp(info.unit, "us") != 0;  // two decimals for rates and ratios
    const bool rate = std::strcmp(info.unit, "GB/s") == 0;
    std::printf("\n%s, %s%s\n\n|%s", info.name, info.unit, rate ? " (higher is better)" : "", info.sized ? " size |" : "");
    for (const std::string& n : names) std::printf(" %s |", n.c_str());
    for (std::size_t i = 1; have_mpi && i < names.size(); ++i) std::printf(" %s/mpi |", names[i].c_str());
    std::printf("\n|%s", info.sized ? "---|" : "");
    for (std::size_t i = 0; i < names.size() * (have_mpi ? 2 : 1) - (have_mpi ? 1 : 0); ++i) std::printf("---|");
    std::printf("\n");
    for (long size : sizes_of(info, p)) {
      std::printf("|");
      if (info.sized) std::printf(" %s |", size_name(size).c_str());
      for (const std::string& n : names) {
        const stats s = summarize(n, size, static_cast<long>(info.op));
        std::printf(" %s |", cell(s, gbs).c_str());
        if (csv && s.ok)
          std::fprintf(csv, "pgas,%s,\"%s\",%ld,%d,%g,%g,%g,%s\n", n.c_str(), info.name, size, o.reps, s.med, s.lo, s.hi,
                       info.unit);
      }
      const stats base = summarize("mpi", size, static_cast<long>(info.op));
      for (std::size_t i = 1; have_mpi && i < names.size(); ++i) {
        const stats s = summarize(names[i], size, static_cast<long>(info.op));
        if (s.ok && base.ok && base.med > 0) std::printf(" %.2f |", s.med / base.med);
        else std::printf(" - |");
      }
      std::printf("\n");
    }
  }
  if (csv) std::fclose(csv);
}

}  // namespace

int main(int argc, char** argv) {
  long iters = 2000, max_size = 4L << 20, trace = 0;
  const char* usage =
      "usage: mpiexec.mpich -n 2 -bind-to core bench_pgas [--reps N] [--quick] [--csv FILE] [--ucx] [--iters K] "
      "[--max-size BYTES] [--trace 1] [--weft:...]\n"
      "       bench_pgas --mode=smp [the same options]\n";
  options o = parse_options(argc, argv, {{"--iters", &iters}, {"--max-size", &max_size}, {"--trace", &trace}}, usage);
  if (iters < 1 || max_size < 8 || max_size > window_bytes) {
    std::fprintf(stderr, "bench_pgas: needs --iters >= 1, 8 <= --max-size <= %ld\n%s", window_bytes, usage);
    return 2;
  }
  plan p;
  p.iters = o.quick ? std::min(iters, 200L) : iters;
  p.trace = trace != 0;
  for (long s = 8; s <= max_size; s *= o.quick ? 8 : 2) p.latency_sizes.push_back(s);
  for (long s = 64 << 10; s <= max_size; s *= o.quick ? 4 : 2) p.bandwidth_sizes.push_back(s);

  const bool under_mpi = o.mode == "mpi";
  int me = 0;
  if (under_mpi) me = init_mpi_for_weft("bench_pgas");
  else add_smp_ranks(o);
  for (int r = 0; r < o.reps; ++r) {
    if (me == 0) std::fprintf(stderr, "\rbench_pgas (%s): repetition %d/%d", o.mode.c_str(), r + 1, o.reps);
    for (const rma_system& s : systems_measured)
      if (wanted(s, o)) s.repetition(o, p);
  }
  if (me == 0) {
    std::fprintf(stderr, "\n");
    print_tables(o, p);
  }
  if (under_mpi) MPI_Finalize();
  return 0;
}
