// Message rate, after the LCI-parcelport paper (section 4): rank 0 injects
// one-way messages of a fixed size in batches at an attempted rate; the
// achieved rate is messages received at rank 1 per second, timed on rank 0
// from the first send until rank 1 reports its last receipt (so the time
// includes one extra one-way trip: negligible against thousands of messages).
//
// A batch goes out once the attempted rate allows all of its messages (batch
// ending with message i is due at t0 + i / rate), so the achieved rate
// cannot exceed the attempted one.
//
//   raw MPI   rank 0: spins until the batch is due, then MPI_Isend per message
//             from one buffer + MPI_Waitall. rank 1 keeps a ring of
//             MPI_Irecv posted (MPI_Waitsome, re-post), then sends a 0-byte
//             "done" message.
//   weft      one injector task per worker of rank 0 calls
//             weft::post_at(1, handler, payload) per message; it yields
//             until a batch is due and after each batch (that is where a
//             worker-driven progress engine hands the batch to the
//             transport). The handler counts with an atomic; the one that
//             completes the count does weft::post_at(0, done), which fulfils
//             a promise rank 0 waits on. 8 B payloads are one std::uint64_t; 16 KiB
//             ones one weft::buffer<char> shared by every call (sent from
//             its memory, as raw MPI sends the same buffer every time; the
//             handler does not read it, as raw MPI's receiver does not).
//
//   bench_msg_rate [--reps N] [--quick] [--csv FILE] [--mode auto|mpi|smp] [--mpi-path]
//                  [--batch B] [--msgs N] [--weft:...]
//   --msgs: messages per measurement for 8 B (16 KiB uses a quarter);
//   default 20000, --quick 2000 (and 1 repetition).
//
// CSV (appended; one row per system, size and rate):
//   bench,system,size_bytes,target_rate,batch,messages,reps,median_rate,min_rate,max_rate
// system: mpi (raw MPI), weft-mpi, weft-smp. target_rate: attempted
// messages/s, 0 = unlimited. *_rate: achieved messages/s over the repetitions.
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "comm_common.hpp"

namespace {

using namespace comm_bench;

constexpr std::array<long, 2> sizes = {8, 16 * 1024};
constexpr std::array<long, 4> rates = {100'000, 1'000'000, 4'000'000, 0};  // 0: unlimited

struct config {
  long batch = 32;
  long only_size = -1;  // --size: one message size only (profiling)
  long only_rate = -1;  // --rate: one attempted rate only (0: unlimited)
  bool wanted(long size, long rate) const {
    return (only_size < 0 || only_size == size) && (only_rate < 0 || only_rate == rate);
  }
  long msgs = 20000;
  long messages(long size) const { return size > 8 ? std::max(1L, msgs / 4) : msgs; }
};
config cfg;

// ---- raw MPI --------------------------------------------------------------

constexpr int tag_msg = 1, tag_done = 2;

double raw_once(int me, long size, long rate, long n) {
  std::vector<char> buf(static_cast<std::size_t>(size), 'x');
  const int bytes = static_cast<int>(size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    const long batch = cfg.batch;
    std::vector<MPI_Request> req(static_cast<std::size_t>(batch));
    const auto t0 = clk::now();
    long sent = 0;
    while (sent < n) {
      const int m = static_cast<int>(std::min(batch, n - sent));
      if (rate > 0) {
        const auto due = after(t0, static_cast<double>(sent + m) / static_cast<double>(rate));
        while (clk::now() < due) {
        }
      }
      // MPI-3 lets concurrent sends read the same buffer.
      for (int i = 0; i < m; ++i) MPI_Isend(buf.data(), bytes, MPI_BYTE, 1, tag_msg, MPI_COMM_WORLD, &req[i]);
      MPI_Waitall(m, req.data(), MPI_STATUSES_IGNORE);
      sent += m;
    }
    MPI_Recv(nullptr, 0, MPI_BYTE, 1, tag_done, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return seconds_since(t0);
  }
  // A ring of posted receives deep enough that the sender rarely finds none.
  const int depth = static_cast<int>(std::min(n, std::max(64L, 2 * cfg.batch)));
  std::vector<char> ring(static_cast<std::size_t>(depth) * static_cast<std::size_t>(size));
  std::vector<MPI_Request> req(static_cast<std::size_t>(depth));
  std::vector<int> idx(static_cast<std::size_t>(depth));
  auto post = [&](int slot) {
    MPI_Irecv(ring.data() + static_cast<std::size_t>(slot) * static_cast<std::size_t>(size), bytes, MPI_BYTE, 0,
              tag_msg, MPI_COMM_WORLD, &req[slot]);
  };
  long posted = 0, got = 0;
  for (int s = 0; s < depth; ++s, ++posted) post(s);
  while (got < n) {
    int count = 0;
    MPI_Waitsome(depth, req.data(), &count, idx.data(), MPI_STATUSES_IGNORE);
    for (int j = 0; j < count; ++j, ++got)
      if (posted < n) {
        post(idx[j]);
        ++posted;
      }
  }
  MPI_Send(nullptr, 0, MPI_BYTE, 0, tag_done, MPI_COMM_WORLD);
  return 0;
}

void raw_pass(int me) {
  raw_once(me, 8, 0, 1000);  // warm-up: connections, allocators
  for (long size : sizes)
    for (long rate : rates) {
      if (!cfg.wanted(size, rate)) continue;
      const long n = cfg.messages(size);
      const double s = raw_once(me, size, rate, n);
      if (me == 0) record("mpi", size, rate, static_cast<double>(n) / s);
    }
}

// ---- weft -----------------------------------------------------------------

// Rank 1's count of this measurement's arrivals, and its target.
// A cache line of its own: next to data every sender reads (the action
// ids), the receiver's increments would bounce that line (false sharing).
struct alignas(64) padded_counter {
  std::atomic<long> value{0};
  char pad[64 - sizeof(std::atomic<long>)];
};
padded_counter received_line;
std::atomic<long>& received = received_line.value;
long expected = 0;
// Rank 0's completion signal (rank 1 posts `on_done` there).
weft::promise<void>* done = nullptr;

void on_done() { done->set_value(); }
void arrived() {
  if (received.fetch_add(1, std::memory_order_acq_rel) + 1 == expected) weft::post_at(0, on_done);
}
void on_small(std::uint64_t) { arrived(); }
void on_large(weft::buffer<char>) { arrived(); }

/// One injector's share: `count` messages at `rate` messages/s (0: as fast
/// as possible), timed from t0.
void inject(long size, long count, double rate, clk::time_point t0, const weft::buffer<char>& payload) {
  const long batch = cfg.batch;
  long sent = 0;
  while (sent < count) {
    const long m = std::min(batch, count - sent);
    if (rate > 0) {
      const auto due = after(t0, static_cast<double>(sent + m) / rate);
      while (clk::now() < due) weft::this_task::yield();
    }
    for (long i = 0; i < m; ++i) {
      if (size == 8)
        weft::post_at(1, on_small, static_cast<std::uint64_t>(sent + i));
      else
        weft::post_at(1, on_large, payload);
    }
    sent += m;
    weft::this_task::yield();  // let the batch go out before the next one
  }
}

/// Runs on both ranks; returns the seconds measured on rank 0.
double weft_once(long size, long rate, long n) {
  const weft::buffer<char> payload(size > 8 ? static_cast<std::size_t>(size) : 0, 'x');
  std::optional<weft::promise<void>> p;
  weft::future<void> finished;
  if (weft::rank() == 1) {
    received.store(0, std::memory_order_relaxed);
    expected = n;
  } else {
    p.emplace();
    finished = p->get_future();
    done = &*p;
  }
  weft::barrier();
  double secs = 0;
  if (weft::rank() == 0) {
    const int injectors = std::max(1, weft::num_threads());
    const auto t0 = clk::now();
    {
      weft::task_group g;
      for (int j = 0; j < injectors; ++j) {
        const long count = n / injectors + (j < n % injectors ? 1 : 0);
        g.run([&, count] { inject(size, count, static_cast<double>(rate) / injectors, t0, payload); });
      }
      g.wait();
    }
    finished.get();
    secs = seconds_since(t0);
  }
  weft::barrier();  // rank 1 must not reset its count for the next run early
  return secs;
}

void weft_pass(const std::string& system) {
  weft_once(8, 0, 1000);  // warm-up: fiber pools, connections
  for (long size : sizes)
    for (long rate : rates) {
      if (!cfg.wanted(size, rate)) continue;
      const long n = cfg.messages(size);
      const double s = weft_once(size, rate, n);
      if (weft::rank() == 0) record(system, size, rate, static_cast<double>(n) / s);
    }
}

// ---- report ---------------------------------------------------------------

void report(const options& o) {
  const auto sys = systems();
  const bool have_mpi = !sys.empty() && sys.front() == "mpi";
  std::printf("\nmessage rate (messages/s received), median [min-max] of %d runs; batch %ld; %ld msgs (8 B), %ld (16 KiB)\n\n",
              o.reps, cfg.batch, cfg.messages(8), cfg.messages(16 * 1024));
  std::printf("| size | attempted |");
  for (auto& s : sys) std::printf(" %s |", s.c_str());
  if (have_mpi)
    for (auto& s : sys)
      if (s != "mpi") std::printf(" %s/mpi |", s.c_str());
  std::printf("\n|---|---|");
  for (std::size_t i = 0; i < sys.size() * (have_mpi ? 2 : 1) - (have_mpi ? 1 : 0); ++i) std::printf("---|");
  std::printf("\n");
  FILE* csv = open_csv(o.csv, "bench,system,size_bytes,target_rate,batch,messages,reps,median_rate,min_rate,max_rate");
  for (long size : sizes)
    for (long rate : rates) {
      if (!cfg.wanted(size, rate)) continue;
      std::printf("| %s | %s |", size_name(size).c_str(), rate ? si(static_cast<double>(rate)).c_str() : "unlimited");
      for (auto& s : sys) {
        stats st = summarize(s, size, rate);
        std::printf(" %s [%s-%s] |", si(st.med).c_str(), si(st.lo).c_str(), si(st.hi).c_str());
        if (csv)
          std::fprintf(csv, "msg_rate,%s,%ld,%ld,%ld,%ld,%d,%.1f,%.1f,%.1f\n", s.c_str(), size, rate, cfg.batch,
                       cfg.messages(size), o.reps, st.med, st.lo, st.hi);
      }
      if (have_mpi) {
        const double base = summarize("mpi", size, rate).med;
        for (auto& s : sys)
          if (s != "mpi") std::printf(" %.2f |", summarize(s, size, rate).med / base);
      }
      std::printf("\n");
    }
  if (csv) std::fclose(csv);
}

}  // namespace

int main(int argc, char** argv) {
  long msgs = -1;
  const char* usage =
      "usage: bench_msg_rate [--reps N] [--quick] [--csv FILE] [--mode auto|mpi|smp] [--mpi-path] [--batch B] [--msgs N] [--size 8|16384] [--rate R|0] "
      "[--weft:...]\n";
  options o = parse_options(argc, argv, {{"--batch", &cfg.batch}, {"--msgs", &msgs}, {"--size", &cfg.only_size}, {"--rate", &cfg.only_rate}}, usage);
  cfg.msgs = msgs > 0 ? msgs : (o.quick ? 2000 : 20000);
  cfg.batch = std::max(1L, cfg.batch);
  if (drive(o, "bench_msg_rate", raw_pass, weft_pass)) report(o);
  return 0;
}
