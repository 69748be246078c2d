// dataflow: every task is a weft::dataflow node whose inputs are the
// (shared) futures of its producers' outputs; nothing synchronises
// timesteps. Each rank builds the nodes of its own block of points while
// the workers already run the ready nodes. An input produced on another
// rank is a future from the mailbox, fulfilled when the producer's output
// arrives by remote call.
//
// Builders: one task builds all of a rank's nodes, or, when the rank's
// points are wide enough per worker (-weft-builders, below), one builder
// per worker builds that worker's sub-block of points, on that worker. A
// single builder is the bottleneck of wide graphs of small tasks (0.27 us a
// node at width 32, of which more than half were atomic operations on
// producer states that the other core had just written); per-worker
// builders build in parallel, and they touch the states of nodes their own
// worker runs. An input from another builder's sub-block comes through the
// exchange: its producer delivers a copy of its output there.
#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "impl.hpp"
#include "output_slots.hpp"
#include "remote_outputs.hpp"
#include "weft/weft.hpp"

namespace taskbench_weft {

builders builders_mode = builders::automatic;

namespace {

using output_future = weft::shared_future<buffer>;

/// Steps per build chunk: about 256 nodes of a builder's points.
long build_chunk_steps(long width) { return std::max(1L, 256 / std::max(1L, width)); }

/// How a rank's points [first, last) are split among its builders: builder
/// k builds [bounds[k], bounds[k + 1]), and its nodes are placed on worker
/// k. Point x goes to worker (x - first) * threads / width, with one
/// builder or several alike (blocks of points per worker, like the ranks'
/// blocks: a point's inputs then mostly come from its own worker's cache).
struct build_split {
  long first = 0;
  std::vector<long> bounds;
  std::vector<int> workers;  // worker of each local point (a table: no division per lookup)
  int worker_of(long x) const noexcept { return workers[static_cast<std::size_t>(x - first)]; }
  int builders() const noexcept { return static_cast<int>(bounds.size()) - 1; }
  /// The builder of local point x (0 with one builder).
  int builder_of(long x) const noexcept { return builders() == 1 ? 0 : worker_of(x); }
};

/// Inputs of this rank's nodes that come from another worker's sub-block,
/// over the first timesteps (enough to see every dependence set): few, and
/// per-worker builders pay off; many (narrow blocks, all_to_all, fft), and
/// the exchange would cost more than building in one place.
bool few_cross_inputs(const taskbench::task_graph& g, const local_block& me, const build_split& per_worker) {
  long all = 0, cross = 0;
  const long steps = std::min(g.steps, 1 + 2 * g.max_dependence_sets());
  for (long t = 1; t < steps; ++t)
    for (long x = me.first; x < me.last; ++x) {
      if (!g.is_active(t, x)) continue;
      g.for_each_input(t, x, [&](long p) {
        ++all;
        cross += me.owns(p) && per_worker.worker_of(p) != per_worker.worker_of(x) ? 1 : 0;
      });
    }
  return cross * 8 <= all;
}

build_split split_points(const taskbench::task_graph& g, const local_block& me) {
  build_split s;
  s.first = me.first;
  const long width = std::max(1L, me.last - me.first);
  const long threads = weft::num_threads();
  for (long i = 0; i < width; ++i) s.workers.push_back(static_cast<int>(i * threads / width));
  for (long k = 0; k <= threads; ++k) s.bounds.push_back(me.first + (k * width + threads - 1) / threads);
  bool per_worker = false;
  switch (builders_mode) {
    case builders::one:
      break;
    case builders::per_worker:
      per_worker = threads > 1;
      break;
    case builders::automatic:
      // At least two points per worker, and few inputs crossing workers.
      per_worker = threads > 1 && width >= 2 * threads && few_cross_inputs(g, me, s);
      break;
  }
  if (!per_worker) s.bounds = {me.first, me.last};
  return s;
}

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
  run_state(const taskbench::task_graph& g, const local_block& m, build_split s)
      : me(m),
        box(g, me),
        split(std::move(s)),
        exchange(g.max_width, [&g, this](long t, long p) { return cross_consumers(g, t, p); }),
        scratch(g),
        gates(static_cast<std::size_t>(split.builders())) {}
  const local_block me;  // this rank's points
  mailbox box;
  const build_split split;
  output_slots exchange;  // outputs for other builders' points (several builders only)
  scratch_set scratch;
  /// Set once every sink is ready, or failed with the first error of a task.
  weft::promise<void> done;
  std::atomic<bool> settled{false};
  std::mutex gate_mutex;
  std::vector<std::shared_ptr<build_gate>> gates;  // each builder's current wait, if any
  /// Consumers of (t, p) on this rank that another builder builds.
  int cross_consumers(const taskbench::task_graph& g, long t, long p) const {
    int n = 0;
    const int from = split.builder_of(p);
    g.for_each_output(t, p, [&](long c) { n += me.owns(c) && split.builder_of(c) != from ? 1 : 0; });
    return n;
  }
  void settle(std::exception_ptr error) {
    if (settled.exchange(true, std::memory_order_acq_rel)) return;
    {
      std::lock_guard lock(gate_mutex);
      for (auto& gate : gates)
        if (gate) gate->open();
    }
    // Last: once `done` is set, run_graph may return and destroy this state
    // (opening the gates after it was a use after free, seen once in ~300
    // runs as a crash in this function).
    if (error)
      done.set_exception(std::move(error));
    else
      done.set_value();
  }
  /// Blocks builder k until `chunk` is done or the run has failed; returns
  /// false in the second case.
  bool wait_for_chunk(int k, std::vector<output_future>&& chunk) {
    auto g = std::make_shared<build_gate>();
    weft::future<void> opened = g->opened.get_future();
    {
      std::lock_guard lock(gate_mutex);
      if (settled.load(std::memory_order_acquire)) return false;
      gates[static_cast<std::size_t>(k)] = g;
    }
    weft::when_all(std::move(chunk)).then([g](auto) { g->open(); });
    opened.get();
    return !settled.load(std::memory_order_acquire);
  }
};

/// Builds the nodes of builder k's points for every timestep; returns the
/// outputs that no node of this builder consumes (the sinks), or what it has
/// built when the run failed meanwhile.
std::vector<output_future> build(const taskbench::task_graph& g, run_state* st, int k) {
  const local_block& me = st->me;
  const build_split& split = st->split;
  const long first_x = split.bounds[static_cast<std::size_t>(k)];
  const long last_x = split.bounds[static_cast<std::size_t>(k) + 1];
  // Tasks of one point share its scratch buffer, so when there is scratch a
  // task also waits (without reading it) for the point's previous task.
  const bool order_points = st->scratch.bytes() > 0;
  std::vector<output_future> prev(static_cast<std::size_t>(g.max_width));
  std::vector<output_future> cur(prev.size());
  std::vector<output_future> sinks;  // outputs no node of this builder consumes: waited for at the end
  // The builder stays at most two chunks of steps ahead of the tasks that
  // ran: a node built long before it runs has left the caches (and a whole
  // graph built up front can exceed them), so its first touches at run time
  // were misses; within the window the nodes, their waiter lists and the
  // task allocator's blocks are still warm when the tasks run.
  const long chunk = build_chunk_steps(last_x - first_x);
  std::deque<std::vector<output_future>> chunk_ends;  // last step of each chunk built
  auto input = [&](long t, long p) -> output_future {
    if (!me.owns(p)) return st->box.take(t - 1, p);
    if (split.builder_of(p) != k) return st->exchange.take(t - 1, p);
    return prev[static_cast<std::size_t>(p)];
  };
  for (long t = 0; t < g.steps; ++t) {
    if (t > 0 && t % chunk == 0) {
      auto& ends = chunk_ends.emplace_back();
      for (long x = first_x; x < last_x; ++x)
        if (g.is_active(t - 1, x)) ends.push_back(prev[static_cast<std::size_t>(x)]);
      if (chunk_ends.size() > 2) {
        std::vector<output_future> oldest = std::move(chunk_ends.front());
        chunk_ends.pop_front();
        if (!st->wait_for_chunk(k, std::move(oldest))) break;  // failed: the run's future rethrows
      }
    }
    // Ahead of the tasks when the end of the last chunk built has not run
    // yet: then this task gives way to ready ones after each node (below).
    // Behind them (tiny tasks), building is the bottleneck: no yielding.
    const bool ahead = !chunk_ends.empty() && !chunk_ends.back().empty() &&
                       !chunk_ends.back().front().is_ready();
    const long first = std::max(g.offset_at(t), first_x);
    const long last = std::min(g.offset_at(t) + g.width_at(t), last_x);
    for (long x = first; x < last; ++x) {
      std::vector<output_future> in;
      in.reserve(g.num_inputs(t, x) + 1);
      g.for_each_input(t, x, [&](long p) { in.push_back(input(t, p)); });
      const std::size_t n_inputs = in.size();
      if (order_points && g.is_active(t - 1, x)) in.push_back(prev[static_cast<std::size_t>(x)]);
      // Where the output goes: to this builder's nodes (their inputs), to
      // other builders' (the exchange), to other ranks (the mailbox there).
      bool own_use = false, cross_use = false, remote_use = false;
      g.for_each_output(t, x, [&](long c) {
        (me.owns(c) ? (split.builder_of(c) == k ? own_use : cross_use) : remote_use) = true;
      });
      output_future out =
          weft::dataflow(weft::on_thread{split.worker_of(x)},
              [&g, st, t, x, n_inputs, cross_use, remote_use](std::vector<output_future>& ready) {
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
                  if (cross_use) st->exchange.deliver(t, x, buffer(result.data(), result.data() + result.size()));
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
      if (!own_use || (order_points && t + 1 == g.steps)) sinks.push_back(out);
      cur[static_cast<std::size_t>(x)] = std::move(out);
      // Building is not free (≈ 0.15 µs a node): when ahead, give way to
      // ready tasks and build while this worker waits for the other's
      // outputs, instead of delaying its own next task (under load
      // imbalance ≈ 0.2 µs a step at width 2).
      if (ahead) weft::this_task::yield_if_others_ready();
    }
    std::swap(prev, cur);
  }
  return sinks;
}

void run_graph(const taskbench::task_graph& g) {
  const local_block me(g, weft::rank(), weft::nranks());
  auto owned = std::make_unique<run_state>(g, me, split_points(g, me));
  run_state* st = owned.get();
  weft::future<void> finished = st->done.get_future();
  // Every local task leads to a sink of its builder, and every output sent
  // here or handed over by another builder is consumed by a local task:
  // once the sinks are done, this rank's part is done.
  // A builder that throws (out of memory) ends the run like a failed task:
  // nodes it built may still run, so the state must stay (see run_state).
  auto build_or_settle = [&g, st](int k) {
    try {
      return build(g, st, k);
    } catch (...) {  // the other builders stop at their next wait
      st->settle(std::current_exception());
      return std::vector<output_future>{};
    }
  };
  std::vector<output_future> sinks;
  const int builders = st->split.builders();
  if (builders == 1) {
    sinks = build_or_settle(0);
  } else {
    std::vector<weft::future<std::vector<output_future>>> parts;
    for (int k = 0; k < builders; ++k)
      parts.push_back(weft::async(weft::on_thread{k}, [build_or_settle, k] { return build_or_settle(k); }));
    for (auto& part : parts)
      for (auto& f : part.get()) sinks.push_back(std::move(f));
  }
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
