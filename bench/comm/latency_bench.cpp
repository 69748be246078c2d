// Latency with a window of concurrent ping-pong chains, after the
// LCI-parcelport paper (section 4). `w` independent chains run between rank
// 0 and rank 1 at once; each makes K round trips with a `size`-byte message
// both ways. With T the time for all chains on rank 0:
//   one-way latency = T / K / 2,   message rate = 2 w K / T = w / latency.
// K = max(8, round_trips / w), so every measurement moves about the same
// number of messages.
//
//   raw MPI   each chain is a tag. Both ranks keep one MPI_Irecv per chain
//             posted and wait with MPI_Waitsome; a completed receive is
//             answered at once with MPI_Isend (after MPI_Wait on the
//             chain's previous send) and the receive re-posted, so chains
//             proceed independently, not in lock step.
//   weft      each chain is a task on rank 0 running
//               b = weft::async_at(1, pong, payload(size)).get();
//             K times, where payload(size) is a weft::buffer<char> made once
//             per size on each rank and pong returns rank 1's; the received
//             buffer is not read. That is the raw MPI side's work: send from
//             a buffer nobody writes, receive into one nobody reads (weft
//             adds an 8-byte length; 4 KiB and up go zero-copy).
//             The remote call is a task on rank 1, the reply fulfils the
//             future on rank 0; the chains are tasks of one task_group.
//   weft echo (systems weft-mpi-echo, weft-smp-echo) the same with
//               v = weft::async_at(1, echo, std::move(v)).get();
//             where echo returns its std::vector<char> argument: the payload
//             really travels there and back, deserialized into a fresh
//             vector at each end (what an application passing vectors pays).
//   weft chain (systems weft-mpi-chain, weft-smp-chain) the paper's own
//             form ("every ping and pong is performed by a different HPX
//             task"): each is a task of its own, started by the message
//             before it, and nobody waits on a future:
//               ping on rank 0:  weft::post_at(1, pong, left, payload(size))
//               pong on rank 1:  weft::post_at(0, ping, left - 1, payload(size))
//             until `left` reaches 0 (K round trips a chain).
//
//   raw UCP  (--ucx; system ucp) the raw MPI side's ping-pong on UCP active
//             messages (raw_ucp.hpp); --ucx also measures weft's ucx
//             backend (systems weft-ucx...).
//
//   bench_latency [--reps N] [--quick] [--csv FILE] [--mode auto|mpi|smp] [--mpi-path] [--ucx]
//                 [--round-trips R] [--size S] [--window W] [--weft:...]
//   --round-trips: round trips per measurement over all chains (default
//   2000, --quick 100 with K >= 2 and 1 repetition).
//
// CSV (appended; one row per system, size and window):
//   bench,system,size_bytes,window,round_trips_per_chain,reps,median_us,min_us,max_us,median_msgs_per_s
// system: mpi (raw MPI), ucp (raw UCP), weft-mpi, weft-smp, weft-ucx, and their -echo and -chain
// forms. *_us: one-way latency in microseconds over the repetitions;
// median_msgs_per_s = window / median.
#include <algorithm>
#include <array>
#include <atomic>
#include <stdexcept>

#include "comm_common.hpp"
#if BENCH_HAVE_UCX
#include "raw_ucp.hpp"
#endif

namespace {

using namespace comm_bench;

constexpr std::array<long, 6> sizes = {8, 64, 512, 4096, 16384, 65536};
constexpr std::array<long, 7> windows = {1, 2, 4, 8, 16, 32, 64};

struct config {
  long round_trips = 2000;
  long min_per_chain = 8;
  long only_size = -1;    // --size: one message size only (profiling)
  long only_window = -1;  // --window: one window only
  long per_chain(long w) const { return std::max(min_per_chain, round_trips / w); }
  bool wanted(long size, long w) const {
    return (only_size < 0 || only_size == size) && (only_window < 0 || only_window == w);
  }
};
config cfg;

// ---- raw MPI --------------------------------------------------------------

double raw_once(int me, long size, long w, long k) {
  const int bytes = static_cast<int>(size);
  const int chains = static_cast<int>(w);
  const int peer = 1 - me;
  const std::vector<char> out(static_cast<std::size_t>(size), 'x');  // every send reads it (MPI-3 allows)
  std::vector<char> in(static_cast<std::size_t>(w * size));
  std::vector<MPI_Request> rreq(static_cast<std::size_t>(w), MPI_REQUEST_NULL);
  std::vector<MPI_Request> sreq(static_cast<std::size_t>(w), MPI_REQUEST_NULL);
  std::vector<long> got(static_cast<std::size_t>(w), 0);
  std::vector<int> idx(static_cast<std::size_t>(w));
  auto post_recv = [&](int c) {
    MPI_Irecv(in.data() + static_cast<std::size_t>(c) * static_cast<std::size_t>(size), bytes, MPI_BYTE, peer, c,
              MPI_COMM_WORLD, &rreq[c]);
  };
  auto send = [&](int c) {
    MPI_Wait(&sreq[c], MPI_STATUS_IGNORE);  // the chain's previous send
    MPI_Isend(out.data(), bytes, MPI_BYTE, peer, c, MPI_COMM_WORLD, &sreq[c]);
  };
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = clk::now();
  for (int c = 0; c < chains; ++c) post_recv(c);
  if (me == 0)
    for (int c = 0; c < chains; ++c) send(c);
  // Rank 1 answers every ping; rank 0 sends the next ping until K replies came.
  for (long left = w * k; left > 0;) {
    int count = 0;
    MPI_Waitsome(chains, rreq.data(), &count, idx.data(), MPI_STATUSES_IGNORE);
    for (int j = 0; j < count; ++j, --left) {
      const int c = idx[j];
      const bool last = ++got[c] == k;
      if (me == 1 || !last) send(c);
      if (!last) post_recv(c);
    }
  }
  MPI_Waitall(chains, sreq.data(), MPI_STATUSES_IGNORE);
  return seconds_since(t0);
}

/// --ucx: raw UCP too (system ucp; raw_ucp.hpp), right after raw MPI.
bool with_ucp = false;

void raw_pass(int me) {
  raw_once(me, 8, 4, 50);  // warm-up
  for (long size : sizes)
    for (long w : windows) {
      if (!cfg.wanted(size, w)) continue;
      const long k = cfg.per_chain(w);
      const double s = raw_once(me, size, w, k);
      if (me == 0) record("mpi", size, w, s / static_cast<double>(k) / 2 * 1e6);
    }
#if BENCH_HAVE_UCX
  if (!with_ucp) return;
  raw_ucp u(me);
  u.once(8, 4, 50);  // warm-up
  for (long size : sizes)
    for (long w : windows) {
      if (!cfg.wanted(size, w)) continue;
      const long k = cfg.per_chain(w);
      const double s = u.once(size, w, k);
      if (me == 0) record("ucp", size, w, s / static_cast<double>(k) / 2 * 1e6);
    }
#endif
}

// ---- weft -----------------------------------------------------------------

std::vector<char> echo(std::vector<char> v) { return v; }

/// This rank's payload of `size` bytes, made once and never written. One
/// set per rank: in smp mode the two ranks share the process, and sending
/// the same buffer from both would bounce its reference count between them.
const weft::buffer<char>& payload(long size) {
  using set = std::array<weft::buffer<char>, sizes.size()>;
  static const std::array<set, 2> all = [] {
    std::array<set, 2> a;
    for (auto& per_rank : a)
      for (std::size_t i = 0; i < sizes.size(); ++i)
        per_rank[i] = weft::buffer<char>(static_cast<std::size_t>(sizes[i]), 'x');
    return a;
  }();
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] == size) return all[static_cast<std::size_t>(weft::rank() & 1)][i];
  throw std::invalid_argument("no payload of that size");
}

weft::buffer<char> pong(weft::buffer<char> in) { return payload(static_cast<long>(in.size())); }

// Task chains (systems weft-*-chain; see the top of the file). Rank 0's
// ping ends its chain after the last round trip and fulfils `chains_done`
// after the last chain. Function objects, not plain functions: a plain
// function's call id takes 16 bytes instead of 8, and the 40-byte body
// would no longer fit inside the message (an out-of-line block and a copy
// on each side; docs/DISTRIBUTED.md, "Why the transports are built this
// way").
std::atomic<long> chains_left{0};
weft::promise<void> chains_done;

struct chain_pong_fn {
  void operator()(long left, weft::buffer<char> in) const;
};
struct chain_ping_fn {
  void operator()(long left, weft::buffer<char> in) const {
    if (left == 0) {
      if (chains_left.fetch_sub(1, std::memory_order_acq_rel) == 1) chains_done.set_value();
      return;
    }
    weft::post_at(1, chain_pong_fn{}, left, payload(static_cast<long>(in.size())));
  }
};
void chain_pong_fn::operator()(long left, weft::buffer<char> in) const {
  weft::post_at(0, chain_ping_fn{}, left - 1, payload(static_cast<long>(in.size())));
}

double chain_once(long size, long w, long k) {
  weft::barrier();
  double secs = 0;
  if (weft::rank() == 0) {
    chains_done = weft::promise<void>();
    weft::future<void> done = chains_done.get_future();
    chains_left.store(w);
    const auto t0 = clk::now();
    for (long c = 0; c < w; ++c) weft::post_at(1, chain_pong_fn{}, k, payload(size));
    done.get();
    secs = seconds_since(t0);
  }
  weft::barrier();
  return secs;
}

/// Runs on both ranks; returns the seconds measured on rank 0. `echo_vectors`:
/// the weft echo variant (see the top of the file).
double weft_once(long size, long w, long k, bool echo_vectors) {
  weft::barrier();
  double secs = 0;
  if (weft::rank() == 0) {
    const auto t0 = clk::now();
    {
      weft::task_group g;
      for (long c = 0; c < w; ++c)
        g.run([size, k, echo_vectors] {
          std::size_t got = 0;
          if (echo_vectors) {
            std::vector<char> v(static_cast<std::size_t>(size), 'x');
            for (long i = 0; i < k; ++i) v = weft::async_at(1, echo, std::move(v)).get();
            got = v.size();
          } else {
            weft::buffer<char> b;
            for (long i = 0; i < k; ++i) b = weft::async_at(1, pong, payload(size)).get();
            got = b.size();
          }
          if (got != static_cast<std::size_t>(size)) throw std::runtime_error("the reply changed the payload size");
        });
      g.wait();
    }
    secs = seconds_since(t0);
  }
  weft::barrier();  // rank 1 serves the calls meanwhile
  return secs;
}

void weft_pass(const std::string& system) {
  // Warm-up with the widest window measured: each chain that waits for a
  // reply holds a fiber, and a fresh runtime (one per repetition) makes
  // its fibers' stacks on first use. Warmed up with 4 chains only, the
  // first row to need 64 (8 B, window 64) paid for 60 new stacks inside
  // its timing: 1.6-2.8x slower than the echo row measured right after it.
  weft_once(8, cfg.only_window > 0 ? cfg.only_window : windows.back(), 20, false);
  for (long size : sizes)
    for (long w : windows) {
      if (!cfg.wanted(size, w)) continue;
      const long k = cfg.per_chain(w);
      for (bool echo_vectors : {false, true}) {
        const double s = weft_once(size, w, k, echo_vectors);
        if (weft::rank() == 0)
          record(echo_vectors ? system + "-echo" : system, size, w, s / static_cast<double>(k) / 2 * 1e6);
      }
      const double s = chain_once(size, w, k);
      if (weft::rank() == 0) record(system + "-chain", size, w, s / static_cast<double>(k) / 2 * 1e6);
    }
}

// ---- report ---------------------------------------------------------------

void report(const options& o) {
  const auto sys = systems();
  const bool have_mpi = !sys.empty() && sys.front() == "mpi";
  // weft's ucx backend against the library it runs on (--ucx).
  std::vector<std::string> over_ucp;
  if (std::find(sys.begin(), sys.end(), "ucp") != sys.end())
    for (auto& s : sys)
      if (s.rfind("weft-ucx", 0) == 0) over_ucp.push_back(s);
  std::printf("\none-way latency in us (round trip / 2), median [min-max] of %d runs; then messages/s from the medians;"
              " %ld round trips per measurement\n\n",
              o.reps, cfg.round_trips);
  std::printf("| size | window |");
  for (auto& s : sys) std::printf(" %s us |", s.c_str());
  if (have_mpi)
    for (auto& s : sys)
      if (s != "mpi") std::printf(" %s/mpi |", s.c_str());
  for (auto& s : over_ucp) std::printf(" %s/ucp |", s.c_str());
  for (auto& s : sys) std::printf(" %s msg/s |", s.c_str());
  std::printf("\n|---|---|");
  for (std::size_t i = 0; i < 2 * sys.size() + (have_mpi ? sys.size() - 1 : 0) + over_ucp.size(); ++i)
    std::printf("---|");
  std::printf("\n");
  FILE* csv = open_csv(o.csv, "bench,system,size_bytes,window,round_trips_per_chain,reps,median_us,min_us,max_us,median_msgs_per_s");
  for (long size : sizes)
    for (long w : windows) {
      if (!cfg.wanted(size, w)) continue;
      std::printf("| %s | %ld |", size_name(size).c_str(), w);
      for (auto& s : sys) {
        stats st = summarize(s, size, w);
        std::printf(" %.2f [%.2f-%.2f] |", st.med, st.lo, st.hi);
        if (csv)
          std::fprintf(csv, "latency,%s,%ld,%ld,%ld,%d,%.3f,%.3f,%.3f,%.1f\n", s.c_str(), size, w, cfg.per_chain(w),
                       o.reps, st.med, st.lo, st.hi, static_cast<double>(w) / st.med * 1e6);
      }
      if (have_mpi) {
        const double base = summarize("mpi", size, w).med;
        for (auto& s : sys)
          if (s != "mpi") std::printf(" %.2f |", summarize(s, size, w).med / base);
      }
      for (auto& s : over_ucp) std::printf(" %.2f |", summarize(s, size, w).med / summarize("ucp", size, w).med);
      for (auto& s : sys) std::printf(" %s |", si(static_cast<double>(w) / summarize(s, size, w).med * 1e6).c_str());
      std::printf("\n");
    }
  if (csv) std::fclose(csv);
}

}  // namespace

int main(int argc, char** argv) {
  long round_trips = -1;
  const char* usage =
      "usage: bench_latency [--reps N] [--quick] [--csv FILE] [--mode auto|mpi|smp] [--mpi-path] [--ucx] [--round-trips R] [--size S]"
      " [--window W] [--weft:...]\n";
  options o = parse_options(argc, argv,
                            {{"--round-trips", &round_trips}, {"--size", &cfg.only_size}, {"--window", &cfg.only_window}},
                            usage);
  cfg.round_trips = round_trips > 0 ? round_trips : (o.quick ? 100 : 2000);
  with_ucp = o.ucx;
  if (o.quick) cfg.min_per_chain = 2;
  if (drive(o, "bench_latency", raw_pass, weft_pass)) report(o);
  return 0;
}
