// Latency of the transport's one-sided operations (am_transport::one_sided(),
// on the mpi backend: MPI-3 RMA windows, am/mpi/mpi_one_sided.hpp; on the
// ucx backend: ucp_put_nbx / ucp_get_nbx / ucp_atomic_op_nbx on memory
// mapped by ucp_mem_map, am/ucx/ucx_one_sided.hpp) against raw MPI RMA on
// the same kind of window, in the same processes, the two interleaved in
// every repetition.
//
//   mpiexec -n 2 bench_one_sided_lat [--reps N] [--iters K] [--weft:...]
//   UCX_TLS=sm,self mpiexec -n 2 bench_one_sided_lat --weft:backend=ucx --weft:ucx-rma=on [...]
//
// Rank 0 times K operations of each kind on 8 bytes of rank 1's window:
//   put+flush     put, then flush(1)            MPI_Put + MPI_Win_flush
//   get+flush     get, then flush(1)            MPI_Get + MPI_Win_flush
//   fetch_add     fetch_add (waits for it)      MPI_Fetch_and_op(SUM) + MPI_Win_flush_local
//   compare_swap  compare_swap (waits for it)   MPI_Compare_and_swap + MPI_Win_flush_local
// Rank 1 is the passive target: in the raw MPI column it waits in
// MPI_Barrier (inside MPI all the time), in the weft column in weft::barrier
// (its idle workers enter MPI between progress passes), then once more in a
// loop of the transport's progress calls (as a busy progress thread would).
// The table shows the median per operation over the repetitions, the ratios
// to raw MPI, and for put and get weft::rma's message path (put/get + wait
// for the future: the target's handler copies), the other way weft moves
// the same bytes.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "am/transport.hpp"
#include "runtime/runtime_state.hpp"
#include "weft/weft.hpp"

namespace {

constexpr int n_ops = 4;
constexpr int n_systems = 4;  // raw MPI RMA, weft one_sided (target idle, target polling), weft rma
constexpr std::array<const char*, n_ops> op_names = {"put+flush", "get+flush", "fetch_add", "compare_swap"};
using latencies = std::array<double, n_ops>;  // microseconds per operation

/// Microseconds per call of `op`, over `iters` calls after a few untimed ones.
template <class Op>
double per_op_us(int iters, Op&& op) {
  for (int i = 0; i < std::min(iters, 50); ++i) op();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) op();
  const std::chrono::duration<double, std::micro> d = std::chrono::steady_clock::now() - t0;
  return d.count() / iters;
}

/// Raw MPI RMA: a window made as mpi_one_sided makes its own (MPI_Win_create
/// over the caller's memory, the same hints, lock_all once).
latencies raw_mpi(int iters) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::vector<std::uint64_t> mem(512, 0);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "accumulate_ordering", "none");
  MPI_Info_set(info, "which_accumulate_ops", "sum,replace,cswap");
  MPI_Win win;
  MPI_Win_create(mem.data(), static_cast<MPI_Aint>(mem.size() * 8), 1, info, MPI_COMM_WORLD, &win);
  MPI_Info_free(&info);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  latencies l{};
  if (me == 0) {
    std::uint64_t v = 1, old = 0, expected = 0;
    l[0] = per_op_us(iters, [&] {
      MPI_Put(&v, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
      MPI_Win_flush(1, win);
    });
    l[1] = per_op_us(iters, [&] {
      MPI_Get(&old, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
      MPI_Win_flush(1, win);
    });
    l[2] = per_op_us(iters, [&] {
      MPI_Fetch_and_op(&v, &old, MPI_UINT64_T, 1, 8, MPI_SUM, win);
      MPI_Win_flush_local(1, win);
    });
    l[3] = per_op_us(iters, [&] {
      MPI_Compare_and_swap(&v, &expected, &old, MPI_UINT64_T, 1, 16, win);
      MPI_Win_flush_local(1, win);
    });
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  return l;
}

/// Times each operation of `ops` on rank 1's `key` (on rank 0).
latencies time_one_sided(weft::detail::one_sided_ops& ops, weft::detail::one_sided_ops::region_key key, int iters) {
  latencies l{};
  std::uint64_t v = 1, old = 0;
  l[0] = per_op_us(iters, [&] {
    ops.put(1, key, 0, &v, 8);
    ops.flush(1);
  });
  l[1] = per_op_us(iters, [&] {
    ops.get(1, key, 0, &old, 8);
    ops.flush(1);
  });
  l[2] = per_op_us(iters, [&] { old = ops.fetch_add(1, key, 8, 1); });
  l[3] = per_op_us(iters, [&] { old = ops.compare_swap(1, key, 16, 0, 1); });
  return l;
}

/// The same through weft's transport, in one weft::run: with rank 1 idle
/// in weft::barrier, then with rank 1 calling the transport's progress in
/// a loop; and weft::rma's put and get (their message path: the target's
/// handler copies).
std::array<latencies, 3> weft_side(const std::vector<std::string>& args, int iters) {
  std::vector<std::string> copy = args;  // weft::run takes its options out of argv
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(copy.size());
  latencies l{}, polled{}, messages{};
  const int rc = weft::run(argc, argv.data(), [&] {
    weft::detail::one_sided_ops* ops = weft::detail::runtime_state()->transports[0]->one_sided();
    if (ops == nullptr) {
      std::fprintf(stderr, "bench_one_sided_lat: this backend has no one-sided operations (--weft:mpi-rma=off?)\n");
      std::exit(2);
    }
    std::vector<std::uint64_t> mem(512, 0);
    const auto key = ops->register_region(mem.data(), mem.size() * 8);
    weft::barrier();
    if (weft::rank() == 0) l = time_one_sided(*ops, key, iters);
    weft::barrier();
    constexpr std::size_t stop_word = 100;  // rank 0 sets it on rank 1 when done
    if (weft::rank() == 0) {
      polled = time_one_sided(*ops, key, iters);
      const std::uint64_t stop = 1;
      ops->put(1, key, stop_word * 8, &stop, 8);
      ops->flush(1);
    } else {
      weft::detail::am_transport& t = *weft::detail::runtime_state()->transports[0];
      while (std::atomic_ref(mem[stop_word]).load(std::memory_order_acquire) == 0) t.progress();
    }
    weft::barrier();
    weft::rma::segment seg = weft::rma::register_memory(mem.data(), mem.size() * 8);
    weft::barrier();
    if (weft::rank() == 0) {
      std::uint64_t v = 1;
      messages[0] = per_op_us(iters, [&] { weft::rma::put(1, seg.id(), 0, &v, 8).get(); });
      messages[1] = per_op_us(iters, [&] { weft::rma::get(1, seg.id(), 0, &v, 8).get(); });
    }
    weft::barrier();
    weft::rma::deregister(seg);
  });
  if (rc != 0) std::exit(rc);
  return {l, polled, messages};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (me == 0) std::fprintf(stderr, "bench_one_sided_lat: run it with mpiexec -n 2\n");
    MPI_Finalize();
    return 2;
  }
  int reps = 5, iters = 2000;
  std::vector<std::string> weft_args = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--iters" && i + 1 < argc) iters = std::atoi(argv[++i]);
    else weft_args.push_back(a);
  }
  std::array<std::array<std::vector<double>, n_ops>, n_systems> samples;
  for (int rep = 0; rep < reps; ++rep) {
    const latencies m = raw_mpi(iters);
    const std::array<latencies, 3> w = weft_side(weft_args, iters);
    for (int k = 0; k < n_ops; ++k) {
      samples[0][k].push_back(m[k]);
      for (int s = 0; s < 3; ++s) samples[s + 1][k].push_back(w[s][k]);
    }
  }
  if (me == 0) {
    std::printf("8-byte one-sided operations, rank 0 on rank 1; median of %d repetitions of %d, us per operation\n",
                reps, iters);
    std::printf("| operation    | mpi-rma | one_sided, target idle | / mpi | one_sided, target polling | / mpi "
                "| weft rma (messages) |\n");
    std::printf("|---|--:|--:|--:|--:|--:|--:|\n");
    for (int k = 0; k < n_ops; ++k) {
      std::array<double, n_systems> m{};
      for (int s = 0; s < n_systems; ++s) m[s] = median(samples[s][k]);
      char msg[32] = "-";
      if (k < 2) std::snprintf(msg, sizeof msg, "%.2f", m[3]);
      std::printf("| %s | %.2f | %.2f | %.1f | %.2f | %.1f | %s |\n", op_names[k], m[0], m[1], m[1] / m[0], m[2],
                  m[2] / m[0], msg);
    }
  }
  MPI_Finalize();
  return 0;
}
