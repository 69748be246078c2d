// dataflow: every task is a weft::dataflow node whose inputs are the
// (shared) futures of its producers' outputs; nothing synchronises
// timesteps. Each rank builds the nodes of its own block of points (one
// task builds while the workers already run the ready nodes). An input
// produced on another rank is a future from the mailbox, fulfilled when the
// producer's output arrives by remote call.
#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "impl.hpp"
#include "remote_outputs.hpp"
#include "weft/weft.hpp"

namespace taskbench_weft {

namespace {

using output_future = weft::shared_future<buffer>;

/// Steps per build chunk: about 256 nodes of this rank's points.
long build_chunk_steps(long local_width) { return std::max(1L, 256 / std::max(1L, local_width)); }

/// What the builder waits on before building the next chunk: opened when
/// the chunk two behind is done, or when the run failed (a failed task's
/// consumers on other ranks never run, so that chunk may never be done).
struct build_gate {
  weft::promise<void> opened;
  std::atomic<bool> is_open{false};
  void open() {
    if (!is_open.exchange(true, std::memory_order_acq_rel)) opened.set_value();
  }
};

/// What the tasks of one run share. On the heap, and left there when the
/// run fails: the error ends the job, but until then tasks of this run that
/// are still pending (and handlers of outputs still arriving) may use it.
struct run_state {
  run_state(const taskbench::task_graph& g, const local_block& me) : box(g, me), scratch(g) {}
  mailbox box;
  scratch_set scratch;
  /// Set once every sink is ready, or failed with the first error of a task.
  weft::promise<void> done;
  std::atomic<bool> settled{false};
  std::mutex gate_mutex;
  std::shared_ptr<build_gate> gate;  // the builder's current wait, if any
  void settle(std::exception_ptr error) {
    if (settled.exchange(true, std::memory_order_acq_rel)) return;
    if (error)
      done.set_exception(std::move(error));
    else
      done.set_value();
    std::lock_guard lock(gate_mutex);
    if (gate) gate->open();
  }
  /// Blocks the builder until `chunk` is done or the run has failed;
  /// returns false in the second case.
  bool wait_for_chunk(std::vector<output_future>&& chunk) {
    auto g = std::make_shared<build_gate>();
    weft::future<void> opened = g->opened.get_future();
    {
      std::lock_guard lock(gate_mutex);
      if (settled.load(std::memory_order_acquire)) return false;
      gate = g;
    }
    weft::when_all(std::move(chunk)).then([g](auto) { g->open(); });
    opened.get();
    return !settled.load(std::memory_order_acquire);
  }
};

void run_graph(const taskbench::task_graph& g) {
  const local_block me(g, weft::rank(), weft::nranks());
  auto owned = std::make_unique<run_state>(g, me);
  run_state* st = owned.get();
  weft::future<void> finished = st->done.get_future();
  // Tasks of one point share its scratch buffer, so when there is scratch a
  // task also waits (without reading it) for the point's previous task.
  const bool order_points = st->scratch.bytes() > 0;
  std::vector<output_future> prev(static_cast<std::size_t>(g.max_width));
  std::vector<output_future> cur(prev.size());
  std::vector<output_future> sinks;  // outputs no local task consumes: waited for at the end
  // The builder stays at most two chunks of steps ahead of the tasks that
  // ran: a node built long before it runs has left the caches (and a whole
  // graph built up front can exceed them), so its first touches at run time
  // were misses; within the window the nodes, their waiter lists and the
  // task allocator's blocks are still warm when the tasks run.
  const long local_width = std::max(1L, me.last - me.first);
  const long threads = weft::num_threads();
  const long chunk = build_chunk_steps(local_width);
  std::deque<std::vector<output_future>> chunk_ends;  // last step of each chunk built
  for (long t = 0; t < g.steps; ++t) {
    if (t > 0 && t % chunk == 0) {
      auto& ends = chunk_ends.emplace_back();
      for (long x = me.first; x < me.last; ++x)
        if (g.is_active(t - 1, x)) ends.push_back(prev[static_cast<std::size_t>(x)]);
      if (chunk_ends.size() > 2) {
        std::vector<output_future> oldest = std::move(chunk_ends.front());
        chunk_ends.pop_front();
        if (!st->wait_for_chunk(std::move(oldest))) break;  // failed: finished.get() rethrows
      }
    }
    // Ahead of the tasks when the end of the last chunk built has not run
    // yet: then this task gives way to ready ones after each node (below).
    // Behind them (tiny tasks), building is the bottleneck: no yielding.
    const bool ahead = !chunk_ends.empty() && !chunk_ends.back().empty() &&
                       !chunk_ends.back().front().is_ready();
    const long first = std::max(g.offset_at(t), me.first);
    const long last = std::min(g.offset_at(t) + g.width_at(t), me.last);
    for (long x = first; x < last; ++x) {
      std::vector<output_future> in;
      in.reserve(g.num_inputs(t, x) + 1);
      g.for_each_input(t, x, [&](long p) { in.push_back(me.owns(p) ? prev[static_cast<std::size_t>(p)] : st->box.take(t - 1, p)); });
      const std::size_t n_inputs = in.size();
      if (order_points && g.is_active(t - 1, x)) in.push_back(prev[static_cast<std::size_t>(x)]);
      bool local_use = false, remote_use = false;
      g.for_each_output(t, x, [&](long c) { (me.owns(c) ? local_use : remote_use) = true; });
      // Point x stays on one worker (blocks of points per worker, like the
      // ranks' blocks): its inputs mostly come from the same worker's
      // cache; idle workers still take placed tasks from busy ones.
      const weft::on_thread where{static_cast<int>((x - me.first) * threads / local_width)};
      output_future out =
          weft::dataflow(where,
              [&g, st, t, x, n_inputs, remote_use](std::vector<output_future>& ready) {
                try {
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
                                  {st->scratch.at(x), st->scratch.bytes()});
                  if (remote_use) st->box.send(t, x, result.data());
                  return result;
                } catch (...) {
                  // Report at once: this task's consumers on other ranks
                  // never get its output, so the sinks may never be ready.
                  st->settle(std::current_exception());
                  throw;
                }
              },
              std::move(in))
              .share();
      if (!local_use || (order_points && t + 1 == g.steps)) sinks.push_back(out);
      cur[static_cast<std::size_t>(x)] = std::move(out);
      // Building is not free (≈ 0.15 µs a node): when ahead, give way to
      // ready tasks and build while this worker waits for the other's
      // outputs, instead of delaying its own next task (under load
      // imbalance ≈ 0.2 µs a step at width 2, docs/BENCHMARKS.md).
      if (ahead) weft::this_task::yield_if_others_ready();
    }
    std::swap(prev, cur);
  }
  // Every local task leads to a sink, and every output sent here is consumed
  // by a local task: once the sinks are done, this rank's part is done.
  prev.clear();
  cur.clear();
  weft::when_all(std::move(sinks)).then([st](auto) { st->settle(nullptr); });
  try {
    finished.get();  // rethrows the first task's error (a validation_error)
  } catch (...) {
    (void)owned.release();  // still in use, see run_state
    throw;
  }
}

}  // namespace

void run_dataflow(const taskbench::app& app) {
  for (const auto& g : app.graphs) run_graph(g);
}

}  // namespace taskbench_weft
