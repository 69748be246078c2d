// Task graph shape and dependencies, counting, parameter and structure checks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "internal.hpp"
#include "taskbench/core.hpp"

namespace taskbench {

using dt = dependence_type;

long task_graph::offset_at(long t) const noexcept {
  if (t < 0) return 0;
  if (type == dt::dom) return std::max(0L, t + max_width - steps);
  return 0;
}

long task_graph::width_at(long t) const noexcept {
  if (t < 0) return 0;
  switch (type) {
    case dt::dom:
      return std::min(max_width, std::min(t + 1, steps - t));
    case dt::tree:
      return std::min(max_width, 1L << std::min(t, 62L));
    default:
      return max_width;
  }
}

long task_graph::max_dependence_sets() const noexcept {
  switch (type) {
    case dt::fft: {
      // ceil(log2(W)), at least 1 so that W = 1 has a dependence set.
      long m = 0;
      while (m < 62 && (1L << m) < max_width) ++m;
      return std::max(1L, m);
    }
    case dt::spread:
    case dt::random_nearest:
    case dt::random_spread:
      return std::max(1L, period);
    default:
      return 1;
  }
}

long task_graph::dependence_set_at(long t) const noexcept {
  switch (type) {
    case dt::fft: {
      long m = max_dependence_sets();
      return ((t + m - 1) % m + m) % m;
    }
    case dt::spread:
    case dt::random_nearest:
    case dt::random_spread: {
      long m = max_dependence_sets();
      return (t % m + m) % m;
    }
    default:
      return 0;
  }
}

std::size_t task_graph::max_intervals() const noexcept {
  std::size_t r = radix > 0 ? static_cast<std::size_t>(radix) : 0;
  return std::max<std::size_t>(3, r);
}

namespace {

// Appends consecutive kept candidates [first, last] as merged runs.
template <class Keep>
std::size_t runs(long first, long last, interval* out, Keep&& keep) {
  std::size_t n = 0;
  long run_start = -1;
  for (long j = first; j <= last; ++j) {
    if (keep(j)) {
      if (run_start < 0) run_start = j;
    } else if (run_start >= 0) {
      out[n++] = {run_start, j - 1};
      run_start = -1;
    }
  }
  if (run_start >= 0) out[n++] = {run_start, last};
  return n;
}

long mod_nonneg(long a, long m) {
  long r = a % m;
  return r < 0 ? r + m : r;
}

}  // namespace

bool detail::random_edge_kept(const task_graph& g, long dset, long producer, long consumer) {
  if (g.radix > 0 && consumer == producer) return true;
  const std::int64_t words[5] = {g.graph_index, g.radix, dset, producer, consumer};
  return random_uniform(words) < g.fraction;
}

std::size_t task_graph::dependencies(long dset, long x, interval* out) const noexcept {
  const long W = max_width;
  switch (type) {
    case dt::trivial:
    case dt::random_spread:
      return 0;
    case dt::no_comm:
      out[0] = {x, x};
      return 1;
    case dt::stencil_1d:
      out[0] = {std::max(0L, x - 1), std::min(W - 1, x + 1)};
      return 1;
    case dt::stencil_1d_periodic: {
      std::size_t n = 0;
      out[n++] = {std::max(0L, x - 1), std::min(W - 1, x + 1)};
      if (x - 1 < 0) out[n++] = {W - 1, W - 1};
      if (x + 1 >= W) out[n++] = {0, 0};
      return n;
    }
    case dt::dom:
      out[0] = {std::max(0L, x - 1), x};
      return 1;
    case dt::tree:
      out[0] = {x / 2, x / 2};
      return 1;
    case dt::fft: {
      std::size_t n = 0;
      long d = 1L << dset;
      if (x - d >= 0) out[n++] = {x - d, x - d};
      out[n++] = {x, x};
      if (x + d < W) out[n++] = {x + d, x + d};
      return n;
    }
    case dt::all_to_all:
      out[0] = {0, W - 1};
      return 1;
    case dt::nearest:
      if (radix <= 0) return 0;
      out[0] = {std::max(0L, x - radix / 2), std::min(W - 1, x + (radix - 1) / 2)};
      return 1;
    case dt::spread:
      for (long i = 0; i < radix; ++i) {
        long p = mod_nonneg(x + i * W / radix + (i > 0 ? dset : 0), W);
        out[i] = {p, p};
      }
      return static_cast<std::size_t>(std::max(0L, radix));
    case dt::random_nearest:
      if (radix <= 0) return 0;
      // The candidates are nearest's window; x is the consumer.
      return runs(std::max(0L, x - radix / 2), std::min(W - 1, x + (radix - 1) / 2), out,
                  [&](long j) { return detail::random_edge_kept(*this, dset, j, x); });
  }
  return 0;
}

std::size_t task_graph::reverse_dependencies(long dset, long x, interval* out) const noexcept {
  const long W = max_width;
  switch (type) {
    case dt::trivial:
    case dt::random_spread:
      return 0;
    case dt::no_comm:
    case dt::stencil_1d:
    case dt::stencil_1d_periodic:
    case dt::fft:
    case dt::all_to_all:
      return dependencies(dset, x, out);  // symmetric
    case dt::dom:
      out[0] = {x, std::min(W - 1, x + 1)};
      return 1;
    case dt::tree:
      if (2 * x + 1 < W) {
        out[0] = {2 * x, 2 * x + 1};
        return 1;
      }
      if (2 * x < W) {
        out[0] = {2 * x, 2 * x};
        return 1;
      }
      return 0;
    case dt::nearest:
      if (radix <= 0) return 0;
      out[0] = {std::max(0L, x - (radix - 1) / 2), std::min(W - 1, x + radix / 2)};
      return 1;
    case dt::spread:
      for (long i = 0; i < radix; ++i) {
        long c = mod_nonneg(x - i * W / radix - (i > 0 ? dset : 0), W);
        out[i] = {c, c};
      }
      return static_cast<std::size_t>(std::max(0L, radix));
    case dt::random_nearest:
      if (radix <= 0) return 0;
      // The candidates are nearest's reverse window; x is the producer.
      return runs(std::max(0L, x - (radix - 1) / 2), std::min(W - 1, x + radix / 2), out,
                  [&](long i) { return detail::random_edge_kept(*this, dset, x, i); });
  }
  return 0;
}

std::vector<interval> task_graph::dependencies(long dset, long x) const {
  std::vector<interval> v(max_intervals());
  v.resize(dependencies(dset, x, v.data()));
  return v;
}

std::vector<interval> task_graph::reverse_dependencies(long dset, long x) const {
  std::vector<interval> v(max_intervals());
  v.resize(reverse_dependencies(dset, x, v.data()));
  return v;
}

std::vector<long> task_graph::input_points(long t, long x) const {
  std::vector<long> v;
  for_each_input(t, x, [&](long p) { v.push_back(p); });
  return v;
}

std::vector<long> task_graph::output_points(long t, long x) const {
  std::vector<long> v;
  for_each_output(t, x, [&](long c) { v.push_back(c); });
  return v;
}

std::size_t task_graph::num_inputs(long t, long x) const noexcept {
  std::size_t n = 0;
  detail::for_each_input_interval(*this, t, x,
                                  [&](long a, long b) { n += static_cast<std::size_t>(b - a + 1); });
  return n;
}

// ---------------------------------------------------------------------------
// Counting
// ---------------------------------------------------------------------------

long task_graph::iterations_at(long t, long x) const noexcept {
  if (kernel.type != kernel_type::load_imbalance) return kernel.iterations;
  const std::int64_t words[3] = {graph_index, t, x};
  double u = random_uniform(words);
  return std::lround((1.0 + (u - 0.5) * kernel.imbalance) * static_cast<double>(kernel.iterations));
}

long long task_graph::flops_per_task(long t, long x) const noexcept {
  switch (kernel.type) {
    case kernel_type::compute_bound:
      return 128LL * kernel.iterations + 64;
    case kernel_type::compute_bound2:
      return 64LL * kernel.iterations;
    case kernel_type::load_imbalance:
      return 128LL * iterations_at(t, x) + 64;
    case kernel_type::compute_dgemm: {
      long long n = detail::dgemm_order(scratch_bytes_per_task);
      return 2 * n * n * n * kernel.iterations;
    }
    default:
      return 0;
  }
}

long long task_graph::bytes_per_task(long, long) const noexcept {
  switch (kernel.type) {
    case kernel_type::memory_bound:
    case kernel_type::memory_daxpy:
      if (kernel.samples <= 0) return 0;
      return static_cast<long long>(scratch_bytes_per_task) * kernel.iterations / kernel.samples;
    default:
      return 0;
  }
}

long long task_graph::total_tasks() const noexcept {
  long long n = 0;
  for (long t = 0; t < steps; ++t) n += width_at(t);
  return n;
}

long long task_graph::total_dependencies() const noexcept {
  long long n = 0;
  for (long t = 0; t < steps; ++t) {
    long o = offset_at(t), w = width_at(t);
    for (long x = o; x < o + w; ++x) n += static_cast<long long>(num_inputs(t, x));
  }
  return n;
}

long long task_graph::total_flops() const noexcept {
  if (kernel.type == kernel_type::load_imbalance) {
    long long n = 0;
    for (long t = 0; t < steps; ++t) {
      long o = offset_at(t), w = width_at(t);
      for (long x = o; x < o + w; ++x) n += flops_per_task(t, x);
    }
    return n;
  }
  return total_tasks() * flops_per_task(0, 0);
}

long long task_graph::total_bytes() const noexcept { return total_tasks() * bytes_per_task(0, 0); }

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

void task_graph::check_parameters() const {
  std::string tname(name_of(type)), kname(name_of(kernel.type));
  if (steps <= 0) throw usage_error(detail::format("error: Invalid flag \"-steps %ld\" must be > 0", steps));
  if (max_width <= 0)
    throw usage_error(detail::format("error: Invalid flag \"-width %ld\" must be > 0", max_width));
  if (radix < 0) throw usage_error(detail::format("error: Invalid flag \"-radix %ld\" must be >= 0", radix));
  if (!(fraction >= 0.0 && fraction <= 1.0))
    throw usage_error(
        detail::format("error: Invalid flag \"-fraction %f\" must be >= 0 and <= 1", fraction));
  if (kernel.iterations < 0)
    throw usage_error(detail::format("error: Invalid flag \"-iter %ld\" must be >= 0", kernel.iterations));
  if (output_bytes_per_task < 16)
    throw usage_error(
        detail::format("error: Invalid flag \"-output %zu\" must be >= 16", output_bytes_per_task));
  if (scratch_bytes_per_task % 8 != 0)
    throw usage_error(detail::format("error: Invalid flag \"-scratch %zu\" must be a multiple of 8",
                                     scratch_bytes_per_task));
  if (kernel.samples < 0)
    throw usage_error(detail::format("error: Invalid flag \"-sample %d\" must be >= 0", kernel.samples));
  if (!(kernel.imbalance >= 0.0 && kernel.imbalance <= 2.0))
    throw usage_error(detail::format("error: Invalid flag \"-imbalance %f\" must be >= 0 and <= 2",
                                     kernel.imbalance));
  if (!is_supported(type))
    throw usage_error(detail::format(
        "error: Dependence type \"%s\" is not supported by weft's Task Bench (use random_nearest "
        "or spread)",
        tname.c_str()));
  if (!is_supported(kernel.type))
    throw usage_error(detail::format(
        "error: Kernel \"%s\" is not supported by weft's Task Bench (it has no I/O kernel)",
        kname.c_str()));
  if (needs_period(type) && period <= 0)
    throw usage_error(detail::format(
        "error: Graph type \"%s\" requires a non-zero period (specify with -period)", tname.c_str()));
  if (!needs_period(type) && period != 0)
    throw usage_error(detail::format(
        "error: Graph type \"%s\" does not support user-configurable period", tname.c_str()));
  if (needs_scratch(kernel.type)) {
    if (scratch_bytes_per_task == 0)
      throw usage_error(
          detail::format("error: Kernel \"%s\" requires scratch memory (specify with -scratch)",
                         kname.c_str()));
    if (kernel.type != kernel_type::compute_dgemm && kernel.samples <= 0)
      throw usage_error(detail::format("error: Kernel \"%s\" requires -sample > 0", kname.c_str()));
    if (kernel.type == kernel_type::compute_dgemm && scratch_bytes_per_task < 24)
      throw usage_error(detail::format(
          "error: Kernel \"%s\" requires -scratch >= 24 (three 1x1 matrices)", kname.c_str()));
    if (!detail::have_blas() && kernel.type != kernel_type::memory_bound)
      throw usage_error(detail::format(
          "error: Kernel \"%s\" needs BLAS, and this build of the Task Bench core has none",
          kname.c_str()));
  }
}

void task_graph::validate() const {
  const std::string tname(name_of(type));
  const long W = max_width;
  if (type == dt::spread && radix > 0) {
    long spread = (W + radix - 1) / radix;
    if (period > spread)
      throw usage_error(detail::format("error: Graph type \"%s\" requires a period that is at most %ld",
                                       tname.c_str(), spread));
  }
  for (long t = 0; t < steps; ++t) {
    long o = offset_at(t), w = width_at(t);
    if (o < 0 || w < 0 || o + w > W)
      throw usage_error(detail::format(
          "error: Graph type \"%s\" has an invalid active range at timestep %ld", tname.c_str(), t));
  }

  std::vector<interval> deps(max_intervals()), rdeps(max_intervals()), sorted;
  auto check_list = [&](const char* what, long dset, long x, std::size_t n, interval* list) {
    sorted.assign(list, list + n);
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < n; ++i) {
      if (sorted[i].first > sorted[i].second || sorted[i].first < 0 || sorted[i].second >= W)
        throw usage_error(detail::format(
            "error: Graph type \"%s\": %s of point %ld (dependence set %ld) has an invalid range "
            "[%ld, %ld] for width %ld",
            tname.c_str(), what, x, dset, sorted[i].first, sorted[i].second, W));
      if (i > 0 && sorted[i].first <= sorted[i - 1].second)
        throw usage_error(detail::format(
            "error: Graph type \"%s\" with width %ld lists point %ld twice among the %s of point %ld "
            "(dependence set %ld); change -width/-radix/-period or use -skip-graph-validation",
            tname.c_str(), W, sorted[i].first, what, x, dset));
    }
  };
  auto contains = [](const interval* list, std::size_t n, long p) {
    for (std::size_t i = 0; i < n; ++i)
      if (list[i].first <= p && p <= list[i].second) return true;
    return false;
  };

  // Check every producer's reverse list against the consumers' lists, within a
  // budget of edge visits; beyond it, producers are sampled with a stride (the
  // counts are still compared exhaustively).
  const long long budget = 1LL << 25;
  for (long dset = 0; dset < max_dependence_sets(); ++dset) {
    long long n_deps = 0, n_rdeps = 0;
    for (long x = 0; x < W; ++x) {
      std::size_t n = dependencies(dset, x, deps.data());
      check_list("dependencies", dset, x, n, deps.data());
      for (std::size_t i = 0; i < n; ++i) n_deps += deps[i].second - deps[i].first + 1;
      std::size_t m = reverse_dependencies(dset, x, rdeps.data());
      check_list("reverse dependencies", dset, x, m, rdeps.data());
      for (std::size_t i = 0; i < m; ++i) n_rdeps += rdeps[i].second - rdeps[i].first + 1;
    }
    if (n_deps != n_rdeps)
      throw usage_error(detail::format(
          "error: Graph type \"%s\": dependence set %ld has %lld dependencies but %lld reverse "
          "dependencies",
          tname.c_str(), dset, n_deps, n_rdeps));
    long stride = 1;
    if (n_rdeps > budget) stride = static_cast<long>((n_rdeps + budget - 1) / budget);
    for (long p = 0; p < W; p += stride) {
      std::size_t m = reverse_dependencies(dset, p, rdeps.data());
      for (std::size_t i = 0; i < m; ++i) {
        for (long c = rdeps[i].first; c <= rdeps[i].second; ++c) {
          std::size_t n = dependencies(dset, c, deps.data());
          if (!contains(deps.data(), n, p))
            throw usage_error(detail::format(
                "error: Graph type \"%s\": point %ld lists consumer %ld (dependence set %ld), which "
                "does not list it as a dependency",
                tname.c_str(), p, c, dset));
        }
      }
    }
  }
}

}  // namespace taskbench
