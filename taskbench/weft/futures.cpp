// futures: Task Bench with ItoyoriFBC's structure. Rank 0's root task
// weft::spawn's one task per point and timestep, step by step; a task
// get()s the futures of its producers (any rank may run it and await any
// future) and returns its output as its future's value. The futures of
// each step are published in global memory, where the next step's tasks
// find them. Outputs over 64 bytes go through global memory instead (one
// row per step), and with scratch a task also waits for its point's
// previous task (they share the scratch buffer).
#include <algorithm>
#include <array>
#include <vector>

#include "impl.hpp"
#include "weft/checkout.hpp"
#include "weft/forkjoin.hpp"
#include "weft/pgas.hpp"

namespace taskbench_weft {
namespace {

using output = std::array<char, 64>;
using output_future = weft::global_future<output>;
using bytes = weft::global_ptr<char>;

output run_task(taskbench::task_graph g, long t, long x, weft::global_ptr<output_future> futures, bytes big, bytes scratch) {
  const long w = g.max_width, ob = static_cast<long>(g.output_bytes_per_task), sb = static_cast<long>(g.scratch_bytes_per_task);
  std::vector<long> producers;
  g.for_each_input(t, x, [&](long q) { producers.push_back(q); });
  std::vector<output_future> waits;
  if (t > 0) {  // a copy of the previous step's futures (no checkout is held while waiting)
    auto row = weft::make_checkout(futures + (t - 1) * w, static_cast<std::size_t>(w), weft::checkout_mode::read);
    for (long q : producers) waits.push_back(row[static_cast<std::size_t>(q)]);
    if (sb > 0 && g.is_active(t - 1, x)) waits.push_back(row[static_cast<std::size_t>(x)]);
  }
  std::vector<output> values(waits.size());
  std::transform(waits.begin(), waits.end(), values.begin(), [](const output_future& f) { return f.get(); });
  weft::checkout<const char> in;
  weft::checkout<char> out;
  if (ob > 64 && t > 0) in = weft::make_checkout(big + (t - 1) * w * ob, static_cast<std::size_t>(w * ob), weft::checkout_mode::read);
  if (ob > 64) out = weft::make_checkout(big + (t * w + x) * ob, static_cast<std::size_t>(ob), weft::checkout_mode::write);
  std::vector<const char*> inputs;
  for (std::size_t k = 0; k < producers.size(); ++k) inputs.push_back(ob > 64 ? in.data() + producers[k] * ob : values[k].data());
  output value;
  auto scr = weft::make_checkout(scratch + x * sb, static_cast<std::size_t>(sb), weft::checkout_mode::read_write);
  char* const o = ob > 64 ? out.data() : value.data();
  g.execute_point(t, x, {o, static_cast<std::size_t>(ob)}, inputs, scr.span());
  if (inject_corruption && t == 1 && x == w / 2) o[0] ^= 1;  // (testing) its consumers must fail
  return value;
}

void run_graph(taskbench::task_graph g) {  // the root task, on rank 0
  const auto w = static_cast<std::size_t>(g.max_width), steps = static_cast<std::size_t>(g.steps);
  const std::size_t ob = g.output_bytes_per_task, sb = g.scratch_bytes_per_task;
  const auto futures = weft::allocate<output_future>(steps * w);
  const bytes big = weft::allocate<char>(ob > 64 ? steps * w * ob : 1), scratch = weft::allocate<char>(std::max<std::size_t>(1, w * sb));
  taskbench::task_graph::prepare_scratch(weft::make_checkout(scratch, w * sb, weft::checkout_mode::write).data(), w * sb);
  std::vector<output_future> all(steps * w);
  const std::size_t window = std::max<std::size_t>(2, 512 / w);  // steps in flight: a bounded deque, warm caches
  for (std::size_t t = 0; t < steps + window; ++t) {
    if (t >= window) for (std::size_t x = 0; x < w; ++x) if (all[(t - window) * w + x].valid()) all[(t - window) * w + x].get();
    if (t >= steps) continue;
    for (long x = g.offset_at(static_cast<long>(t)); x < g.offset_at(static_cast<long>(t)) + g.width_at(static_cast<long>(t)); ++x)
      all[t * w + static_cast<std::size_t>(x)] = weft::spawn(run_task, g, static_cast<long>(t), x, futures, big, scratch);
    std::ranges::copy(std::span(all).subspan(t * w, w), weft::make_checkout(futures + static_cast<std::ptrdiff_t>(t * w), w, weft::checkout_mode::write).begin());
  }
  for (bytes b : {big, scratch}) weft::deallocate(b);
  weft::deallocate(futures);
}

}  // namespace

void run_futures(const taskbench::app& app) {
  for (const auto& g : app.graphs) weft::root_exec(run_graph, g);
}

}  // namespace taskbench_weft
