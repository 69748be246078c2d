#include "nonblock.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

namespace taskbench_mpi {
namespace {

using taskbench::interval;
using taskbench::task_graph;

class nonblock_runner final : public graph_runner {
 public:
  nonblock_runner(const task_graph& g, MPI_Comm comm, const options& opt, int tag_ub)
      : g_(g), comm_(comm), inject_(opt.inject_corruption) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &nranks_);
    const long W = g_.max_width;
    lo_ = taskbench::block_first(rank_, nranks_, W);
    hi_ = taskbench::block_first(rank_ + 1, nranks_, W);
    ob_ = g_.output_bytes_per_task;
    sb_ = g_.scratch_bytes_per_task;
    if (ob_ > static_cast<std::size_t>(INT_MAX)) die(comm_, "error: taskbench_mpi: -output must be < 2 GiB");

    // Owner and index inside the owner's block of every point; an edge's tag
    // is (producer index, consumer index), unique among the messages between
    // two ranks in one timestep.
    owner_.resize(static_cast<std::size_t>(W));
    index_.resize(static_cast<std::size_t>(W));
    for (long x = 0; x < W; ++x) {
      const long r = taskbench::block_owner(x, nranks_, W);
      owner_[static_cast<std::size_t>(x)] = static_cast<int>(r);
      index_[static_cast<std::size_t>(x)] = x - taskbench::block_first(r, nranks_, W);
      max_block_ = std::max(max_block_, index_[static_cast<std::size_t>(x)] + 1);
    }
    if (max_block_ * max_block_ - 1 > static_cast<long>(tag_ub)) {
      char msg[200];
      std::snprintf(msg, sizeof msg,
                    "error: taskbench_mpi: %ld points per rank do not fit in MPI tags (MPI_TAG_UB %d); "
                    "use more ranks or -mpi-aggregate",
                    max_block_, tag_ub);
      die(comm_, msg);
    }

    // Dependencies and reverse dependencies of every local point, per set.
    const long n = hi_ - lo_;
    const long sets = g_.max_dependence_sets();
    deps_.resize(static_cast<std::size_t>(sets));
    rdeps_.resize(static_cast<std::size_t>(sets));
    std::size_t max_inputs = 0;
    for (long d = 0; d < sets; ++d) {
      for (long x = lo_; x < hi_; ++x) {
        deps_[static_cast<std::size_t>(d)].push_back(g_.dependencies(d, x));
        rdeps_[static_cast<std::size_t>(d)].push_back(g_.reverse_dependencies(d, x));
        std::size_t k = 0;
        for (auto [a, b] : deps_[static_cast<std::size_t>(d)].back()) k += static_cast<std::size_t>(b - a + 1);
        max_inputs = std::max(max_inputs, k);
      }
    }

    // Each point has max_inputs input buffers of its own and one output.
    max_inputs_ = max_inputs;
    inputs_.assign(static_cast<std::size_t>(n) * max_inputs_ * ob_, 0);
    input_ptrs_.resize(static_cast<std::size_t>(n) * max_inputs_);
    for (std::size_t k = 0; k < input_ptrs_.size(); ++k) input_ptrs_[k] = inputs_.data() + k * ob_;
    input_sizes_.assign(max_inputs_, ob_);
    n_inputs_.assign(static_cast<std::size_t>(n), 0);
    outputs_.assign(static_cast<std::size_t>(n) * ob_, 0);
    scratch_.assign(static_cast<std::size_t>(n) * sb_, 0);
    task_graph::prepare_scratch(scratch_.data(), scratch_.size());
  }

  void run() override {
    for (long t = 0; t < g_.steps; ++t) step(t);
  }

 private:
  int tag(long producer, long consumer) const {
    return static_cast<int>(index_[static_cast<std::size_t>(producer)] * max_block_ +
                            index_[static_cast<std::size_t>(consumer)]);
  }
  char* output(long x) { return outputs_.data() + static_cast<std::size_t>(x - lo_) * ob_; }

  void step(long t) {
    const long offset = g_.offset_at(t), width = g_.width_at(t);
    const long last_offset = g_.offset_at(t - 1), last_width = g_.width_at(t - 1);
    const auto dset = static_cast<std::size_t>(g_.dependence_set_at(t));
    requests_.clear();

    for (long x = lo_; x < hi_; ++x) {
      const auto i = static_cast<std::size_t>(x - lo_);
      // Receive: every input of x, in order.
      std::size_t k = 0;
      if (x >= offset && x < offset + width) {
        for (auto [a, b] : deps_[dset][i]) {
          for (long p = std::max(a, last_offset); p <= std::min(b, last_offset + last_width - 1); ++p) {
            char* in = input_ptrs_[i * max_inputs_ + k];
            ++k;
            if (p >= lo_ && p < hi_) {
              std::memcpy(in, output(p), ob_);
              continue;
            }
            requests_.emplace_back();
            MPI_Irecv(in, static_cast<int>(ob_), MPI_BYTE, owner_[static_cast<std::size_t>(p)], tag(p, x),
                      comm_, &requests_.back());
          }
        }
      }
      n_inputs_[i] = k;
      // Send: x's output of t-1 to each remote consumer at t.
      if (x >= last_offset && x < last_offset + last_width) {
        for (auto [a, b] : rdeps_[dset][i]) {
          for (long c = std::max(a, offset); c <= std::min(b, offset + width - 1); ++c) {
            if (c >= lo_ && c < hi_) continue;
            requests_.emplace_back();
            MPI_Isend(output(x), static_cast<int>(ob_), MPI_BYTE, owner_[static_cast<std::size_t>(c)], tag(x, c),
                      comm_, &requests_.back());
          }
        }
      }
    }

    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);

    for (long x = std::max(lo_, offset); x < std::min(hi_, offset + width); ++x) {
      const auto i = static_cast<std::size_t>(x - lo_);
      g_.execute_point(t, x, output(x), ob_, input_ptrs_.data() + i * max_inputs_, input_sizes_.data(),
                       n_inputs_[i], scratch_.data() + i * sb_, sb_);
      // Testing aid: corrupt the output of (1, first point of the last rank).
      if (inject_ && t == 1 && x == lo_ && rank_ == nranks_ - 1) output(x)[ob_ - 1] ^= 0x10;
    }
  }

  const task_graph& g_;
  MPI_Comm comm_;
  bool inject_;
  int rank_ = 0, nranks_ = 1;
  long lo_ = 0, hi_ = 0, max_block_ = 0;
  std::size_t ob_ = 0, sb_ = 0, max_inputs_ = 0;
  std::vector<int> owner_;
  std::vector<long> index_;
  std::vector<std::vector<std::vector<interval>>> deps_, rdeps_;  // [dset][local point]
  std::vector<char> inputs_, outputs_, scratch_;
  std::vector<char*> input_ptrs_;
  std::vector<std::size_t> input_sizes_, n_inputs_;
  std::vector<MPI_Request> requests_;
};

}  // namespace

std::unique_ptr<graph_runner> make_nonblock_runner(const task_graph& g, MPI_Comm comm, const options& opt,
                                                   int tag_ub) {
  return std::make_unique<nonblock_runner>(g, comm, opt, tag_ub);
}

}  // namespace taskbench_mpi
