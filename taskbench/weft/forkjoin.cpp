// forkjoin: Task Bench with Itoyori's structure. Every point's output lives
// in global memory, in two arrays that alternate per timestep; rank 0's
// root task forks each timestep's points (any rank may steal them) and
// joins them before the next. A point reads its inputs through read
// checkouts of the previous step's array, one per interval of producers
// (all_to_all's whole row is one), and writes its output and uses its
// scratch through checkouts: where a task runs does not matter.
#include <algorithm>
#include <vector>

#include "impl.hpp"
#include "weft/checkout.hpp"
#include "weft/forkjoin.hpp"

namespace taskbench_weft {
namespace {

using bytes = weft::global_ptr<char>;

void run_point(const taskbench::task_graph& g, long t, long x, bytes prev, bytes cur, bytes scratch) {
  const auto ob = static_cast<long>(g.output_bytes_per_task), sb = static_cast<long>(g.scratch_bytes_per_task);
  const long lo = g.offset_at(t - 1), hi = lo + g.width_at(t - 1) - 1;  // producers active at t-1
  taskbench::interval_buffer deps(g.max_intervals());
  const std::size_t n = t == 0 ? 0 : g.dependencies(g.dependence_set_at(t), x, deps.data());
  std::vector<weft::checkout<const char>> rows;
  std::vector<const char*> inputs;
  for (std::size_t k = 0; k < n; ++k) {
    const long a = std::max(lo, deps.data()[k].first), b = std::min(hi, deps.data()[k].second);
    if (a > b) continue;
    rows.push_back(weft::make_checkout(prev + a * ob, static_cast<std::size_t>((b - a + 1) * ob), weft::checkout_mode::read));
    for (long q = a; q <= b; ++q) inputs.push_back(rows.back().data() + (q - a) * ob);
  }
  auto out = weft::make_checkout(cur + x * ob, static_cast<std::size_t>(ob), weft::checkout_mode::write);
  auto scr = weft::make_checkout(scratch + x * sb, static_cast<std::size_t>(sb), weft::checkout_mode::read_write);
  g.execute_point(t, x, out.span(), inputs, scr.span());
  if (inject_corruption && t == 1 && x == g.max_width / 2) out[0] ^= 1;  // (testing) its consumers must fail
}

void run_graph(taskbench::task_graph g) {  // the root task, on rank 0
  const auto w = static_cast<std::size_t>(g.max_width), ob = g.output_bytes_per_task, sb = g.scratch_bytes_per_task;
  const bytes out[2] = {weft::allocate<char>(w * ob), weft::allocate<char>(w * ob)};
  const bytes scratch = weft::allocate<char>(std::max<std::size_t>(1, w * sb));
  taskbench::task_graph::prepare_scratch(weft::make_checkout(scratch, w * sb, weft::checkout_mode::write).data(), w * sb);
  const weft::fork_policy policy{.cutoff = 1};
  for (long t = 0; t < g.steps; ++t) {
    const bytes prev = out[(t + 1) & 1], cur = out[t & 1];
    weft::parallel_for_each(policy, g.offset_at(t), g.offset_at(t) + g.width_at(t),
                            [=](long x) { run_point(g, t, x, prev, cur, scratch); });
  }
  for (bytes b : {out[0], out[1], scratch}) weft::deallocate(b);
}

}  // namespace

void run_forkjoin(const taskbench::app& app) {
  for (const auto& g : app.graphs) weft::root_exec(run_graph, g);
}

}  // namespace taskbench_weft
