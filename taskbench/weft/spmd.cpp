// spmd: bulk-synchronous, the structure of Task Bench's MPI "nonblock"
// implementation: per timestep each rank runs its block of points (with a
// parallel loop over its workers when it has several); a task whose input
// comes from another rank waits for that output's message; the end of the
// loop is the timestep boundary. Outputs for other ranks are posted as soon
// as their task finishes.
//
// Per timestep and block of points, the points whose inputs are all here
// run first (as MPI's implementation runs its local-only points before it
// waits); the others are all registered with the step_mailbox and run in the
// order their last input arrives (as a Waitsome loop would), never in the
// order of the points: a point whose input comes late must not hold up one
// whose inputs are in (fft's butterflies pair points whose producers run at
// different times of the previous step). Received outputs land in
// preallocated slots of the step_mailbox, read in place.
#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <vector>

#include "impl.hpp"
#include "remote_outputs.hpp"
#include "weft/weft.hpp"

namespace taskbench_weft {

namespace {

class graph_run {
 public:
  explicit graph_run(const taskbench::task_graph& g)
      : g_(g), me_(g, weft::rank(), weft::nranks()),
        blocks_(static_cast<std::size_t>(std::max(1, weft::num_threads()))),
        box_(g, me_), scratch_(g),
        ob_(g.output_bytes_per_task),
        max_inputs_(max_inputs(g, me_)) {
    const auto n = static_cast<std::size_t>(me_.last - me_.first);
    outputs_[0].assign(n * ob_, 0);
    outputs_[1].assign(n * ob_, 0);
  }

  void run() {
    const long threads = std::max(1, weft::num_threads());
    for (long t = 0; t < g_.steps; ++t) {
      const long first = std::max(g_.offset_at(t), me_.first);
      const long last = std::min(g_.offset_at(t) + g_.width_at(t), me_.last);
      if (threads == 1 || last - first <= 1) {
        run_block(t, first, last, blocks_[0]);
      } else if (first < last) {
        const long grain = (last - first + threads - 1) / threads;  // one block per worker
        const long blocks = (last - first + grain - 1) / grain;
        // A block's error is rethrown here, not through parallel_for: its
        // handler joins the other blocks inside a catch clause, and a fiber
        // that resumes on another thread there has no exception to rethrow.
        std::atomic<bool> failed{false};
        std::exception_ptr error;
        weft::parallel_for(0L, blocks, 1L, [&](long b) {
          const long lo = first + b * grain;
          try {
            run_block(t, lo, std::min(last, lo + grain), blocks_[static_cast<std::size_t>(b)]);
          } catch (...) {
            if (!failed.exchange(true, std::memory_order_acq_rel)) error = std::current_exception();
          }
        });
        if (error) std::rethrow_exception(error);
      }
      box_.step_done(t - 1);  // every local consumer of step t-1's outputs ran
    }
  }

 private:
  /// One task of the timestep: where its inputs are, which are missing, and
  /// its registration with the mailbox while it waits for them.
  struct point_task {
    explicit point_task(graph_run& run)
        : ptrs(run.max_inputs_), sizes(run.max_inputs_), missing(run.max_inputs_), missing_at(run.max_inputs_),
          job(&execute, this, run.max_inputs_), run(&run) {}
    long t = 0, x = 0;
    std::size_t n_inputs = 0, n_missing = 0;
    std::vector<const char*> ptrs;
    std::vector<std::size_t> sizes;
    std::vector<long> missing;            // producers whose outputs are not here yet
    std::vector<std::size_t> missing_at;  // ... and their input positions
    step_mailbox::pending_job job;
    graph_run* run;
    static void execute(void* self) {
      auto& p = *static_cast<point_task*>(self);
      p.run->execute(p);
    }
  };
  /// The tasks of one block (one per worker), reused every timestep.
  using block_tasks = std::vector<std::unique_ptr<point_task>>;

  /// Runs points [lo, hi) of step t: those whose inputs are all here first,
  /// then the others as their inputs arrive.
  void run_block(long t, long lo, long hi, block_tasks& tasks) {
    if (lo >= hi) return;
    std::size_t n_waiting = 0;
    for (long x = lo; x < hi; ++x) {
      if (tasks.size() <= n_waiting) tasks.push_back(std::make_unique<point_task>(*this));
      point_task& p = *tasks[n_waiting];
      gather(t, x, p);
      if (p.n_missing == 0)
        execute(p);
      else
        ++n_waiting;
    }
    for (std::size_t k = 0; k < n_waiting; ++k) {
      point_task& p = *tasks[k];
      box_.start(t - 1, p.missing.data(), p.n_missing, p.job);
    }
    // Each job runs in the handler of its last input (or already ran in
    // start); waiting for them in any order costs nothing more.
    for (std::size_t k = 0; k < n_waiting; ++k) box_.wait(tasks[k]->job);
  }

  /// Where the inputs of (t, x) are, and which remote ones have not arrived.
  void gather(long t, long x, point_task& p) {
    p.t = t;
    p.x = x;
    const char* prev = outputs_[(t + 1) & 1].data();
    std::size_t i = 0, n_missing = 0;
    g_.for_each_input(t, x, [&](long q) {
      if (me_.owns(q)) {
        p.ptrs[i] = prev + static_cast<std::size_t>(q - me_.first) * ob_;
        p.sizes[i++] = ob_;
        return;
      }
      const std::span<const char> in = box_.poll(t - 1, q);
      if (in.data() == nullptr) {
        p.missing[n_missing] = q;
        p.missing_at[n_missing++] = i;
      }
      p.ptrs[i] = in.data();
      p.sizes[i++] = in.size();
    });
    p.n_inputs = i;
    p.n_missing = n_missing;
  }

  /// Runs (t, x) once all its inputs are here and sends its output.
  void execute(point_task& p) {
    for (std::size_t k = 0; k < p.n_missing; ++k) {
      const std::span<const char> in = box_.poll(p.t - 1, p.missing[k]);
      p.ptrs[p.missing_at[k]] = in.data();
      p.sizes[p.missing_at[k]] = in.size();
    }
    char* out = outputs_[p.t & 1].data() + static_cast<std::size_t>(p.x - me_.first) * ob_;
    g_.execute_point(p.t, p.x, out, ob_, p.ptrs.data(), p.sizes.data(), p.n_inputs, scratch_.at(p.x),
                     scratch_.bytes());
    box_.send(p.t, p.x, out);  // no-op unless another rank consumes it
  }

  /// The most inputs any local point has (the walk itself clips further).
  static std::size_t max_inputs(const taskbench::task_graph& g, const local_block& me) {
    std::vector<taskbench::interval> buf(g.max_intervals());
    std::size_t most = 0;
    for (long dset = 0; dset < g.max_dependence_sets(); ++dset)
      for (long x = me.first; x < me.last; ++x) {
        std::size_t n = 0;
        const std::size_t k = g.dependencies(dset, x, buf.data());
        for (std::size_t j = 0; j < k; ++j)
          n += static_cast<std::size_t>(std::max(0L, std::min(g.max_width - 1, buf[j].second) - std::max(0L, buf[j].first) + 1));
        most = std::max(most, n);
      }
    return most;
  }

  const taskbench::task_graph& g_;
  local_block me_;
  // Before box_: a failing run abandons the mailbox (its destructor) before
  // the tasks registered with its slots go.
  std::vector<block_tasks> blocks_;
  step_mailbox box_;
  scratch_set scratch_;
  std::size_t ob_;
  std::size_t max_inputs_;
  // Double-buffered outputs of the local block: step t writes [t % 2] and
  // reads [(t - 1) % 2].
  std::vector<char> outputs_[2];
};

}  // namespace

void run_spmd(const taskbench::app& app) {
  for (const auto& g : app.graphs) graph_run(g).run();
}

}  // namespace taskbench_weft
