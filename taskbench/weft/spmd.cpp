// spmd: bulk-synchronous, the structure of Task Bench's MPI "nonblock"
// implementation: per timestep each rank runs its block of points (with a
// parallel loop over its workers when it has several); a task whose input
// comes from another rank waits for that output's message; the end of the
// loop is the timestep boundary. Outputs for other ranks are posted as soon
// as their task finishes.
//
// Per timestep and block of points, the points whose inputs are all here
// run first (as MPI's implementation runs its local-only points before it
// waits); the others then wait for their messages in order. Received
// outputs land in preallocated slots of the step_mailbox, read in place.
#include <algorithm>
#include <atomic>
#include <exception>
#include <vector>

#include "impl.hpp"
#include "remote_outputs.hpp"
#include "weft/weft.hpp"

namespace taskbench_weft {

namespace {

/// Up to `N` elements on the stack, more on the heap.
template <class T, std::size_t N>
class small_vec {
 public:
  explicit small_vec(std::size_t n) : n_(n) {
    if (n > N) heap_.resize(n);
  }
  T* data() noexcept { return n_ > N ? heap_.data() : small_; }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  std::size_t size() const noexcept { return n_; }

 private:
  std::size_t n_;
  T small_[N];
  std::vector<T> heap_;
};

class graph_run {
 public:
  explicit graph_run(const taskbench::task_graph& g)
      : g_(g), me_(g, weft::rank(), weft::nranks()), box_(g, me_),
        scratch_(g),
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
        run_block(t, first, last);
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
            run_block(t, lo, std::min(last, lo + grain));
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
  /// Runs points [lo, hi) of step t: those whose inputs are all here first.
  void run_block(long t, long lo, long hi) {
    if (lo >= hi) return;
    if (hi - lo == 1) {
      run_point(t, lo, true);
      return;
    }
    small_vec<long, 32> deferred(static_cast<std::size_t>(hi - lo));
    std::size_t n_deferred = 0;
    for (long x = lo; x < hi; ++x)
      if (!run_point(t, x, false)) deferred[n_deferred++] = x;
    for (std::size_t i = 0; i < n_deferred; ++i) run_point(t, deferred[i], true);
  }

  /// Gathers the inputs of (t, x) and runs it; without `wait`, returns
  /// false (having done nothing) when a remote input has not arrived yet.
  /// Everything that does not need the missing inputs is done before
  /// waiting for them; the task itself then runs as soon as the last one
  /// lands (in the handler of its message, see step_mailbox::run_when_ready).
  bool run_point(long t, long x, bool wait) {
    small_vec<const char*, 16> ptrs(max_inputs_);
    small_vec<std::size_t, 16> sizes(max_inputs_);
    small_vec<long, 16> missing(max_inputs_);  // producers whose outputs are not here yet
    small_vec<std::size_t, 16> missing_at(max_inputs_);  // ... and their input positions
    const char* prev = outputs_[(t + 1) & 1].data();
    std::size_t i = 0, n_missing = 0;
    g_.for_each_input(t, x, [&](long p) {
      if (me_.owns(p)) {
        ptrs[i] = prev + static_cast<std::size_t>(p - me_.first) * ob_;
        sizes[i++] = ob_;
        return;
      }
      const std::span<const char> in = box_.poll(t - 1, p);
      if (in.data() == nullptr) {
        missing[n_missing] = p;
        missing_at[n_missing++] = i;
      }
      ptrs[i] = in.data();
      sizes[i++] = in.size();
    });
    if (!wait && n_missing != 0) return false;
    char* out = outputs_[t & 1].data() + static_cast<std::size_t>(x - me_.first) * ob_;
    auto job = [&] {
      for (std::size_t k = 0; k < n_missing; ++k) {
        const std::span<const char> in = box_.poll(t - 1, missing[k]);
        ptrs[missing_at[k]] = in.data();
        sizes[missing_at[k]] = in.size();
      }
      g_.execute_point(t, x, out, ob_, ptrs.data(), sizes.data(), i, scratch_.at(x), scratch_.bytes());
      box_.send(t, x, out);  // no-op unless another rank consumes it
    };
    if (n_missing == 0)
      job();
    else
      box_.run_when_ready(t - 1, missing.data(), n_missing, job);
    return true;
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
