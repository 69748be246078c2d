#include "runtime/trace_session.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "runtime/runtime_state.hpp"
#include "trace/control.hpp"
#include "trace/recorder.hpp"
#include "weft/am.hpp"

namespace weft::detail {

namespace {

/// Ping-pongs per rank; the one with the shortest round trip is kept.
constexpr int clock_samples = 8;
/// How long rank 0 waits for the other processes' parts.
constexpr double merge_timeout_s = 120;

std::string g_path;  // set while tracing
int g_first_rank = 0;
int g_world_size = 1;
std::string g_backend;
std::atomic<bool> g_part_written{false};

std::uint64_t clock_now() { return trace::monotonic_ns(); }

void take_clock_offset(int rank, std::int64_t offset_ns, std::int64_t rtt_ns) {
  trace::set_clock_offset(rank, offset_ns, rtt_ns);
}

bool write_own_part() noexcept {
  if (g_part_written.exchange(true)) return true;
  trace::stop();
  return trace::write_part(trace::part_path(g_path, g_first_rank), g_world_size, g_backend);
}

}  // namespace

void start_trace(process_runtime& rt) {
  if (rt.opts.trace.empty()) return;
  g_path = rt.opts.trace;
  g_first_rank = rt.first_rank;
  g_world_size = rt.world_size;
  g_backend = rt.backend;
  g_part_written.store(false);
  std::vector<std::pair<int, int>> ranks;
  for (auto& s : rt.local) ranks.emplace_back(s->rank(), s->num_workers());
  trace::set_local_ranks(std::move(ranks));
  trace::start(static_cast<std::size_t>(rt.opts.trace_limit), rt.first_rank);
  trace::name_this_thread("main thread");
}

void sync_trace_clocks(process_runtime& rt) {
  // Only processes of one job started apart have clocks of their own.
  if (static_cast<int>(rt.local.size()) == rt.world_size) return;
  // Every process records before any process's tasks (or rank 0's clock
  // samples below) send it a message: a message dispatched before its
  // receiver started recording would leave its send unpaired. The sum
  // also tells whether every process traces (every one passes here).
  const std::uint64_t processes = static_cast<std::uint64_t>(rt.world_size) / rt.local.size();
  const std::uint64_t tracing = rt.transports[0]->global_sum({g_path.empty() ? 0u : 1u, 0, 0})[0];
  if (tracing != 0 && tracing != processes && rt.first_rank == 0)
    std::fprintf(stderr,
                 "weft: --weft:trace was given to %llu of %llu processes; the file holds only their ranks and "
                 "their messages to the others stay unpaired\n",
                 static_cast<unsigned long long>(tracing), static_cast<unsigned long long>(processes));
  if (g_path.empty() || rt.first_rank != 0) return;
  for (int r = static_cast<int>(rt.local.size()); r < rt.world_size; ++r) {
    std::int64_t best_rtt = std::numeric_limits<std::int64_t>::max(), offset = 0;
    for (int k = 0; k < clock_samples; ++k) {
      const auto t0 = static_cast<std::int64_t>(trace::monotonic_ns());
      const auto remote = static_cast<std::int64_t>(weft::async_at(r, &clock_now).get());
      const auto t1 = static_cast<std::int64_t>(trace::monotonic_ns());
      if (t1 - t0 < best_rtt) {
        best_rtt = t1 - t0;
        offset = remote - (t0 + t1) / 2;  // its clock minus ours, halfway through the round trip
      }
    }
    trace::set_clock_offset(r, offset, best_rtt);
    weft::post_at(r, &take_clock_offset, r, offset, best_rtt);
  }
}

void finish_trace(process_runtime& rt) {
  if (g_path.empty()) return;
  write_own_part();
  if (rt.first_rank == 0) {
    // One part per process, named by its first rank; every process of a
    // job holds the same number of ranks (all of them on smp, one on mpi).
    std::vector<std::string> parts;
    const int ranks_per_process = static_cast<int>(rt.local.size());
    for (int r = 0; r < rt.world_size; r += ranks_per_process) parts.push_back(trace::part_path(g_path, r));
    trace::merge_parts(g_path, parts, merge_timeout_s);
  }
  g_path.clear();
}

void write_trace_after_failure() noexcept {
  if (g_path.empty()) return;
  if (write_own_part())
    std::fprintf(stderr, "weft: rank %d: trace events so far are in %s\n", g_first_rank,
                 trace::part_path(g_path, g_first_rank).c_str());
}

}  // namespace weft::detail
