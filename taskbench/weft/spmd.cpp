// spmd: bulk-synchronous, the structure of Task Bench's MPI "nonblock"
// implementation: per timestep each rank runs its block of points with a
// parallel loop over its workers; a task whose input comes from another rank
// waits for that output's message; the loop's join is the timestep boundary.
// Outputs for other ranks are posted as soon as their task finishes.
#include <algorithm>
#include <vector>

#include "impl.hpp"
#include "remote_outputs.hpp"
#include "weft/weft.hpp"

namespace taskbench_weft {

namespace {

void run_graph(const taskbench::task_graph& g) {
  const local_block me(g, weft::rank(), weft::nranks());
  mailbox box(g, me);
  scratch_set scratch(g);
  const auto width = static_cast<std::size_t>(g.max_width);
  // Double-buffered local outputs: timestep t writes [t % 2], reads [(t - 1) % 2].
  std::vector<buffer> outputs[2] = {std::vector<buffer>(width, buffer(g.output_bytes_per_task)),
                                    std::vector<buffer>(width, buffer(g.output_bytes_per_task))};
  const long threads = std::max(1, weft::num_threads());
  for (long t = 0; t < g.steps; ++t) {
    const long first = std::max(g.offset_at(t), me.first);
    const long last = std::min(g.offset_at(t) + g.width_at(t), me.last);
    if (first >= last) continue;
    std::vector<buffer>& out = outputs[t & 1];
    const std::vector<buffer>& in = outputs[(t + 1) & 1];
    const long grain = (last - first + threads - 1) / threads;  // one block per worker
    weft::parallel_for(first, last, grain, [&](long x) {
      const char* small[16];
      std::vector<const char*> large;
      const char** ptrs = small;
      const std::size_t n = g.num_inputs(t, x);
      if (n > 16) {
        large.resize(n);
        ptrs = large.data();
      }
      std::vector<weft::shared_future<buffer>> remote;  // keeps received buffers alive
      std::size_t i = 0;
      g.for_each_input(t, x, [&](long p) {
        if (me.owns(p)) {
          ptrs[i++] = in[static_cast<std::size_t>(p)].data();
        } else {
          remote.push_back(box.take(t - 1, p));
          ptrs[i++] = remote.back().get().data();  // suspends this task until it arrives
        }
      });
      buffer& o = out[static_cast<std::size_t>(x)];
      g.execute_point(t, x, {o.data(), o.size()}, {ptrs, n}, {scratch.at(x), scratch.bytes()});
      box.send(t, x, o);  // no-op unless another rank consumes it
    });
  }
}

}  // namespace

void run_spmd(const taskbench::app& app) {
  for (const auto& g : app.graphs) run_graph(g);
}

}  // namespace taskbench_weft
