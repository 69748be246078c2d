// Steal latency between two ranks of one node: rank 0's root forks a probe
// task and then stays busy for --busy-us (default 50) microseconds, --iters
// times (default 20000); rank 1, idle, steals. Records
//   - the thief's mean successful steal (node_steal_ns / from_node) and
//     mean failed attempt (failed_steal_ns / failed), from steal_stats();
//   - end to end: from just before the fork (parallel_invoke, which pushes
//     the probe) until the probe starts on the thief, by steady_clock
//     (CLOCK_MONOTONIC: one clock for every process of the machine); mean
//     and median over the stolen probes;
//   - the fraction of probes stolen and of steal attempts that succeed
//     (the latter falls as --busy-us grows: the thief keeps trying while
//     the victim is busy and its deque is empty).
//
//   bench_fj_steal --weft:ranks=2 --weft:threads=1
//   WEFT_THREADS=1 mpiexec.mpich -n 2 -bind-to core bench_fj_steal
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using namespace fj_bench;

void spin_us(long us) {
  const std::int64_t end = now_ns() + us * 1000;
  while (now_ns() < end) {
  }
}

/// Push-to-start delays of the stolen probes (rank 0's root task only).
std::vector<std::int64_t> rank0_delays;

struct probe {
  std::int64_t started_ns;
  std::int32_t rank;
};

void run(const options& o) {
  if (o.serial() || weft::nranks() < 2) {
    std::fprintf(stderr, "bench_fj_steal needs 2 ranks\n");
    std::exit(1);
  }
  const long iters = o.number("iters", 20000), busy = o.number("busy-us", 50);
  const std::string param = "busy=" + std::to_string(busy) + "us";
  for (long rep = 0; rep < o.number("reps", 1); ++rep) {
    weft::barrier();
    weft::reset_steal_statistics();
    weft::root_exec([iters, busy] {
      // The root task never leaves rank 0 (only forked tasks are stolen),
      // so it may keep its measurements in rank 0's process memory.
      rank0_delays.clear();
      rank0_delays.reserve(static_cast<std::size_t>(iters));
      for (long i = 0; i < iters; ++i) {
        const std::int64_t pushed = now_ns();
        auto [unused, p] = weft::parallel_invoke([busy] { spin_us(busy); return 0; },
                                                 [] { return probe{now_ns(), weft::rank()}; });
        (void)unused;
        if (p.rank != 0) rank0_delays.push_back(p.started_ns - pushed);
      }
    });
    if (weft::rank() == 0) {
      std::vector<std::int64_t> v = rank0_delays;
      std::sort(v.begin(), v.end());
      double sum = 0;
      for (auto x : v) sum += static_cast<double>(x);
      record(o, "steal", param, "probes_stolen_fraction", static_cast<double>(v.size()) / static_cast<double>(iters));
      if (!v.empty()) {
        record(o, "steal", param, "push_to_start_mean_us", 1e-3 * sum / static_cast<double>(v.size()));
        record(o, "steal", param, "push_to_start_median_us", 1e-3 * static_cast<double>(v[v.size() / 2]));
      }
    }
    record_steal_stats(o, "steal", param);
  }
}

}  // namespace

int main(int argc, char** argv) { return bench_main(argc, argv, run); }
