// dataflow: every task is a weft::dataflow node whose inputs are the
// (shared) futures of its producers' outputs; nothing synchronises
// timesteps. Each rank builds the nodes of its own block of points (one
// task builds while the workers already run the ready nodes). An input
// produced on another rank is a future from the mailbox, fulfilled when the
// producer's output arrives by remote call.
#include <algorithm>
#include <vector>

#include "impl.hpp"
#include "remote_outputs.hpp"
#include "weft/weft.hpp"

namespace taskbench_weft {

namespace {

using output_future = weft::shared_future<buffer>;

void run_graph(const taskbench::task_graph& g) {
  const local_block me(g, weft::rank(), weft::nranks());
  mailbox box(g, me);
  scratch_set scratch(g);
  // Tasks of one point share its scratch buffer, so when there is scratch a
  // task also waits (without reading it) for the point's previous task.
  const bool order_points = scratch.bytes() > 0;
  std::vector<output_future> prev(static_cast<std::size_t>(g.max_width));
  std::vector<output_future> cur(prev.size());
  std::vector<output_future> sinks;  // outputs no local task consumes: waited for at the end
  for (long t = 0; t < g.steps; ++t) {
    const long first = std::max(g.offset_at(t), me.first);
    const long last = std::min(g.offset_at(t) + g.width_at(t), me.last);
    for (long x = first; x < last; ++x) {
      std::vector<output_future> in;
      g.for_each_input(t, x, [&](long p) { in.push_back(me.owns(p) ? prev[static_cast<std::size_t>(p)] : box.take(t - 1, p)); });
      const std::size_t n_inputs = in.size();
      if (order_points && g.is_active(t - 1, x)) in.push_back(prev[static_cast<std::size_t>(x)]);
      bool local_use = false, remote_use = false;
      g.for_each_output(t, x, [&](long c) { (me.owns(c) ? local_use : remote_use) = true; });
      output_future out =
          weft::dataflow(
              [&g, &scratch, &box, t, x, n_inputs, remote_use](std::vector<output_future>& ready) {
                buffer result(g.output_bytes_per_task);
                const char* small[16];
                std::vector<const char*> large;
                const char** ptrs = small;
                if (n_inputs > 16) {
                  large.resize(n_inputs);
                  ptrs = large.data();
                }
                for (std::size_t i = 0; i < n_inputs; ++i) ptrs[i] = ready[i].get().data();
                g.execute_point(t, x, {result.data(), result.size()}, {ptrs, n_inputs},
                                {scratch.at(x), scratch.bytes()});
                if (remote_use) box.send(t, x, result);
                return result;
              },
              std::move(in))
              .share();
      if (!local_use || (order_points && t + 1 == g.steps)) sinks.push_back(out);
      cur[static_cast<std::size_t>(x)] = std::move(out);
    }
    std::swap(prev, cur);
  }
  // Every local task leads to a sink, and every output sent here is consumed
  // by a local task: once the sinks are done, this rank's part is done.
  for (auto& s : sinks) s.get();  // rethrows a task's validation_error
}

}  // namespace

void run_dataflow(const taskbench::app& app) {
  for (const auto& g : app.graphs) run_graph(g);
}

}  // namespace taskbench_weft
