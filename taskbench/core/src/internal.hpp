// Internal helpers of the Task Bench core (not installed, not public).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "taskbench/core.hpp"

namespace taskbench::detail {

// printf into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void appendf(std::string& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// random_nearest: is the edge producer -> consumer kept?
bool random_edge_kept(const task_graph& g, long dset, long producer, long consumer);

// compute_bound's arithmetic: 64 accumulators a_k = -0.5 + 0.004 k, each
// `iterations` rounds of a = a*a + a (fused), then their sum.
double compute_bound(long iterations);

// compute_dgemm's matrix order N = floor(sqrt(scratch / 24)).
long dgemm_order(std::size_t scratch_bytes) noexcept;

// Whether the core was built with cblas (memory_daxpy, compute_dgemm).
bool have_blas() noexcept;

// Runs the kernel of task (t, x) (no validation).
void run_kernel(const task_graph& g, long t, long x, char* scratch, std::size_t scratch_bytes);

// TASKBENCH_TRACE (trace.cpp): whether tasks are being traced; the clock
// they are traced with; record task (t, x) of `graph`, started at `start`
// and ending now.
extern bool trace_on;
long long trace_clock() noexcept;
void trace_task(long graph, long t, long x, long long start) noexcept;

// f(first, last) for each non-empty clipped input interval of task (t, x).
template <class F>
void for_each_input_interval(const task_graph& g, long t, long x, F&& f) {
  if (t <= 0 || t >= g.steps) return;
  long lo = g.offset_at(t - 1), hi = lo + g.width_at(t - 1);
  interval_buffer room(g.max_intervals());
  interval* buf = room.data();
  std::size_t n = g.dependencies(g.dependence_set_at(t), x, buf);
  for (std::size_t i = 0; i < n; ++i) {
    long first = std::max(lo, buf[i].first), last = std::min(hi - 1, buf[i].second);
    if (first <= last) f(first, last);
  }
}

}  // namespace taskbench::detail
