// futures: Task Bench with ItoyoriFBC's structure. Rank 0's root task
// weft::spawn's one task per point and timestep, step by step; a task
// get()s the futures of its producers (any rank may run it and await any
// future) and returns its output as its future's value. The futures of
// each step are published in global memory, where the next step's tasks
// find them. Outputs over 64 bytes go through global memory instead (one
// row per step).
#include <algorithm>
#include <array>
#include <vector>

#include "impl.hpp"
#include "weft/checkout.hpp"
#include "weft/forkjoin.hpp"

namespace taskbench_weft {
namespace {

using output = std::array<char, 64>;
using output_future = weft::global_future<output>;
constexpr long inline_bytes = sizeof(output);

output run_task(taskbench::task_graph g, long t, long x, weft::global_ptr<output_future> futures,
                weft::global_ptr<char> big, weft::global_ptr<char> scratch) {
  const long w = g.max_width, ob = g.output_bytes_per_task, sb = g.scratch_bytes_per_task;
  const std::vector<long> producers = g.input_points(t, x);
  std::vector<output_future> waits;
  if (t > 0) {  // a copy of the previous step's futures: no checkout is held while waiting
    auto row = weft::make_checkout(futures + (t - 1) * w, w, weft::checkout_mode::read);
    for (long q : producers) waits.push_back(row[q]);
  }
  std::vector<output> values(waits.size());
  std::ranges::transform(waits, values.begin(), [](const output_future& f) { return f.get(); });
  weft::checkout<const char> in;
  weft::checkout<char> out;
  if (ob > inline_bytes && t > 0) in = weft::make_checkout(big + (t - 1) * w * ob, w * ob, weft::checkout_mode::read);
  if (ob > inline_bytes) out = weft::make_checkout(big + (t * w + x) * ob, ob, weft::checkout_mode::write);
  std::vector<const char*> inputs;
  for (std::size_t k = 0; k < producers.size(); ++k)
    inputs.push_back(ob > inline_bytes ? in.data() + producers[k] * ob : values[k].data());
  output value;
  char* const o = ob > inline_bytes ? out.data() : value.data();
  auto scr = weft::make_checkout(scratch + x * sb, sb, weft::checkout_mode::read_write);
  g.execute_point(t, x, {o, static_cast<std::size_t>(ob)}, inputs, scr.span());
  if (inject_corruption && t == 1 && x == w / 2) o[0] ^= 1;  // (testing) its consumers must fail
  return value;
}

void run_graph(taskbench::task_graph g) {  // the root task, on rank 0
  const long w = g.max_width, ob = g.output_bytes_per_task, sb = g.scratch_bytes_per_task;
  const auto futures = weft::allocate<output_future>(g.steps * w);
  const auto big = weft::allocate<char>(ob > inline_bytes ? g.steps * w * ob : 1);
  const auto scratch = weft::allocate<char>(std::max(1L, w * sb));
  taskbench::task_graph::prepare_scratch(weft::make_checkout(scratch, w * sb, weft::checkout_mode::write).data(), w * sb);
  std::vector<output_future> all(g.steps * w);
  // Every future is awaited before root_exec returns.
  auto await_step = [&](long s) { for (long x = s * w; x < s * w + w; ++x) if (all[x].valid()) all[x].get(); };
  for (long t = 0; t < g.steps; ++t) {
    // As in ItoyoriFBC, step t starts after step t-1 ended (for a fair
    // comparison with the others, and a task awaiting one that has not
    // started costs a spin and a fiber switch); a point's tasks never run
    // at once, so they may share its scratch.
    if (t >= 1) await_step(t - 1);
    for (long x = g.offset_at(t); x < g.offset_at(t) + g.width_at(t); ++x)
      all[t * w + x] = weft::spawn(run_task, g, t, x, futures, big, scratch);
    std::ranges::copy_n(all.begin() + t * w, w, weft::make_checkout(futures + t * w, w, weft::checkout_mode::write).begin());
  }
  await_step(g.steps - 1);
  for (auto b : {big, scratch}) weft::deallocate(b);
  weft::deallocate(futures);
}

}  // namespace

void run_futures(const taskbench::app& app) {
  for (const auto& g : app.graphs) weft::root_exec(run_graph, g);
}

}  // namespace taskbench_weft
