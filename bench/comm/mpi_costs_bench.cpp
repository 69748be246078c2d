// What plain MPI costs on this machine, no weft involved: the facts the mpi
// backend's design leans on (docs/DISTRIBUTED.md, "Why the transports are
// built this way"), made repeatable.
//
//   mpiexec -n 2 -bind-to core bench_mpi_costs [--reps N] [--round-trips K]
//
// Table 1, one-way latency by message size: a one-chain MPI_Isend/MPI_Irecv
// ping-pong (the receive posted ahead with MPI_ANY_SOURCE, as weft posts
// its eager receives). The sizes bracket the shared-memory short-message
// limit of MPICH over UCX, past which a message costs more to send: weft
// keeps its frame header small because of it.
//
// Table 2, the cost of single MPI calls on rank 0 during an 8-byte
// ping-pong, in nanoseconds per call: posting a receive, sending, and
// completing a send request at two moments (right after MPI_Isend, and
// once the reply has come back) by MPI_Test, by MPI_Wait and by
// MPI_Request_get_status followed by MPI_Wait. The weft transport retires
// its eager sends with one of these; which is cheapest is not obvious
// (MPI_Test makes a progress pass even on a finished request).
//
// Repetitions run every configuration in turn (interleaved, so a drift of
// the host shows in every row alike); cells are the median over
// repetitions with the minimum. Timer: the TSC on x86-64 (calibrated
// against steady_clock), steady_clock elsewhere.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace {

using clk = std::chrono::steady_clock;

// ---- a cheap timer ------------------------------------------------------------

#if defined(__x86_64__)
inline std::uint64_t ticks() noexcept { return __rdtsc(); }
/// Nanoseconds per TSC tick, measured over 50 ms.
double ns_per_tick() {
  const auto t0 = clk::now();
  const std::uint64_t c0 = ticks();
  while (clk::now() - t0 < std::chrono::milliseconds(50)) {
  }
  const double ns = std::chrono::duration<double, std::nano>(clk::now() - t0).count();
  return ns / static_cast<double>(ticks() - c0);
}
#else
inline std::uint64_t ticks() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now().time_since_epoch()).count());
}
double ns_per_tick() { return 1.0; }
#endif

struct options {
  int reps = 5;
  long round_trips = 20000;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> long {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_mpi_costs: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::atol(argv[++i]);
    };
    if (a == "--reps") o.reps = static_cast<int>(value());
    else if (a == "--round-trips") o.round_trips = value();
    else {
      std::fprintf(stderr, "usage: mpiexec -n 2 bench_mpi_costs [--reps N] [--round-trips K]\n");
      std::exit(2);
    }
  }
  if (o.reps < 1 || o.round_trips < 100) {
    std::fprintf(stderr, "bench_mpi_costs: --reps >= 1 and --round-trips >= 100\n");
    std::exit(2);
  }
  return o;
}

struct summary {
  double median, min;
};
summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.front()};
}

constexpr int tag = 1;
std::array<char, 4096> out_buf{};
std::array<char, 65536> in_buf{};

// ---- table 1: latency by size -------------------------------------------------

/// One-way latency of a `size`-byte ping-pong, microseconds (on rank 0).
double ping_pong_us(int me, int size, long k) {
  const int peer = 1 - me;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = clk::now();
  for (long i = 0; i < k; ++i) {
    MPI_Request rq, sq;
    MPI_Irecv(in_buf.data(), static_cast<int>(in_buf.size()), MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &rq);
    if (me == 0) {
      MPI_Isend(out_buf.data(), size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sq);
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
      MPI_Wait(&sq, MPI_STATUS_IGNORE);
    } else {
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
      MPI_Isend(out_buf.data(), size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sq);
      MPI_Wait(&sq, MPI_STATUS_IGNORE);
    }
  }
  return std::chrono::duration<double, std::micro>(clk::now() - t0).count() / static_cast<double>(k) / 2;
}

// ---- table 2: single calls ----------------------------------------------------

enum class retire { test, wait, get_status_wait };
constexpr std::array<const char*, 3> retire_names = {"MPI_Test", "MPI_Wait", "MPI_Request_get_status + MPI_Wait"};

/// Completes the finished send `sq` the given way; returns whether it was
/// found complete (a request that is not is waited for outside the timing).
bool complete(retire how, MPI_Request& sq) {
  int done = 0;
  switch (how) {
    case retire::test:
      MPI_Test(&sq, &done, MPI_STATUS_IGNORE);
      break;
    case retire::wait:
      MPI_Wait(&sq, MPI_STATUS_IGNORE);
      done = 1;
      break;
    case retire::get_status_wait:
      MPI_Request_get_status(sq, &done, MPI_STATUS_IGNORE);
      if (done) MPI_Wait(&sq, MPI_STATUS_IGNORE);
      break;
  }
  return done != 0;
}

/// Mean ticks per call on rank 0 over an 8-byte ping-pong of k round trips.
struct call_costs {
  double irecv = 0, isend = 0, completion = 0, empty_test = 0;
};

/// `how` completes the send either right after MPI_Isend (`at_once`) or
/// after the reply came.
call_costs measure_calls(int me, long k, retire how, bool at_once) {
  const int peer = 1 - me;
  std::uint64_t irecv = 0, isend = 0, completion = 0, empty = 0, n_empty = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (long i = 0; i < k; ++i) {
    MPI_Request rq, sq;
    std::uint64_t a = ticks();
    MPI_Irecv(in_buf.data(), static_cast<int>(in_buf.size()), MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &rq);
    irecv += ticks() - a;
    if (me == 0) {
      a = ticks();
      MPI_Isend(out_buf.data(), 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sq);
      const std::uint64_t b = ticks();
      isend += b - a;
      bool done = false;
      if (at_once) {
        done = complete(how, sq);
        completion += ticks() - b;
      }
      for (int flag = 0; !flag;) {
        a = ticks();
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        if (!flag) {
          empty += ticks() - a;
          ++n_empty;
        }
      }
      if (!at_once) {
        a = ticks();
        done = complete(how, sq);
        completion += ticks() - a;
      }
      if (!done) MPI_Wait(&sq, MPI_STATUS_IGNORE);
    } else {
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
      MPI_Isend(out_buf.data(), 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sq);
      MPI_Wait(&sq, MPI_STATUS_IGNORE);
    }
  }
  const auto kd = static_cast<double>(k);
  call_costs c;
  c.irecv = static_cast<double>(irecv) / kd;
  c.isend = static_cast<double>(isend) / kd;
  c.completion = static_cast<double>(completion) / kd;
  c.empty_test = n_empty ? static_cast<double>(empty) / static_cast<double>(n_empty) : 0;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const options o = parse(argc, argv);
  if (n != 2) {
    if (me == 0) std::fprintf(stderr, "bench_mpi_costs: run with mpiexec -n 2\n");
    MPI_Finalize();
    return 2;
  }
  const double ns = ns_per_tick();
  const std::vector<int> sizes = {8, 64, 80, 88, 92, 93, 96, 128, 256};
  std::vector<std::vector<double>> lat(sizes.size());
  // calls[how][at_once]: one call_costs per repetition.
  std::vector<call_costs> calls[3][2];
  ping_pong_us(me, 8, 1000);  // warm-up
  for (int r = 0; r < o.reps; ++r) {
    for (std::size_t s = 0; s < sizes.size(); ++s) lat[s].push_back(ping_pong_us(me, sizes[s], o.round_trips));
    for (int how = 0; how < 3; ++how)
      for (int at_once = 0; at_once < 2; ++at_once)
        calls[how][at_once].push_back(measure_calls(me, o.round_trips, static_cast<retire>(how), at_once != 0));
  }
  if (me == 0) {
    std::printf("plain MPI, %d repetitions of %ld round trips; median [min]\n\n", o.reps, o.round_trips);
    std::printf("| size | one-way us |\n|---|---|\n");
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      const summary st = summarize(lat[s]);
      std::printf("| %d B | %.3f [%.3f] |\n", sizes[s], st.median, st.min);
    }
    auto cell = [&](double call_costs::*field, int how, int at_once) {
      std::vector<double> v;
      for (const call_costs& c : calls[how][at_once]) v.push_back(c.*field * ns);
      const summary st = summarize(v);
      std::printf(" %.0f [%.0f] |", st.median, st.min);
    };
    std::printf("\nns per call on rank 0, 8 B ping-pong\n\n| call | ns |\n|---|---|\n");
    std::printf("| MPI_Irecv |");
    cell(&call_costs::irecv, 1, 0);
    std::printf("\n| MPI_Isend |");
    cell(&call_costs::isend, 1, 0);
    std::printf("\n| MPI_Test finding nothing |");
    cell(&call_costs::empty_test, 1, 0);
    std::printf("\n");
    for (int how = 0; how < 3; ++how) {
      std::printf("| %s on the send, right after MPI_Isend |", retire_names[static_cast<std::size_t>(how)]);
      cell(&call_costs::completion, how, 1);
      std::printf("\n| %s on the send, once the reply came |", retire_names[static_cast<std::size_t>(how)]);
      cell(&call_costs::completion, how, 0);
      std::printf("\n");
    }
  }
  MPI_Finalize();
  return 0;
}
