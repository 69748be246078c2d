#include "aggregate.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <vector>

namespace taskbench_mpi {
namespace {

using taskbench::task_graph;

class aggregate_runner final : public graph_runner {
 public:
  aggregate_runner(const task_graph& g, MPI_Comm comm, const options& opt, int tag_ub)
      : g_(g), comm_(comm), inject_(opt.inject_corruption) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &nranks_);
    lo_ = taskbench::block_first(rank_, nranks_, g_.max_width);
    hi_ = taskbench::block_first(rank_ + 1, nranks_, g_.max_width);
    ob_ = g_.output_bytes_per_task;
    sb_ = g_.scratch_bytes_per_task;
    if (ob_ > static_cast<std::size_t>(INT_MAX)) die(comm_, "error: taskbench_mpi: -output must be < 2 GiB");

    // Tags: producer index inside its owner's block, optionally << 2 with
    // graph and timestep parity.
    long max_block = (g_.max_width + nranks_ - 1) / nranks_;
    if (max_block * 4 - 1 <= tag_ub) {
      tag_shift_ = 2;
    } else if (max_block - 1 <= tag_ub) {
      tag_shift_ = 0;
    } else {
      char msg[200];
      std::snprintf(msg, sizeof msg,
                    "error: taskbench_mpi: %ld points per rank do not fit in MPI tags (MPI_TAG_UB %d); "
                    "use more ranks",
                    max_block, tag_ub);
      die(comm_, msg);
    }

    const auto n = static_cast<std::size_t>(hi_ - lo_);
    out_[0].assign(n * ob_, 0);
    out_[1].assign(n * ob_, 0);
    scratch_.assign(n * sb_, 0);
    task_graph::prepare_scratch(scratch_.data(), scratch_.size());
    slot_stamp_.assign(static_cast<std::size_t>(g_.max_width), -1);
    slot_of_point_.assign(static_cast<std::size_t>(g_.max_width), -1);
    rank_stamp_.assign(static_cast<std::size_t>(nranks_), -1);
  }

  void run() override {
    for (long t = 0; t < g_.steps; ++t) step(t);
  }

 private:
  long owner(long x) const { return taskbench::block_owner(x, nranks_, g_.max_width); }

  int tag(long producer, long producer_owner, long t) const {
    long local = producer - taskbench::block_first(producer_owner, nranks_, g_.max_width);
    if (tag_shift_ == 0) return static_cast<int>(local);
    return static_cast<int>((local << 2) | ((g_.graph_index & 1) << 1) | (t & 1));
  }

  void step(long t) {
    const long offset = g_.offset_at(t), width = g_.width_at(t);
    const long last_offset = g_.offset_at(t - 1), last_width = g_.width_at(t - 1);
    const long first = std::max(lo_, offset), last = std::min(hi_, offset + width);
    const long n_local = std::max(0L, last - first);
    const char* prev = out_[(t + 1) & 1].data();  // outputs of t-1
    ++stamp_;

    // 1. Inputs of the local active points: >= 0 local producer index,
    //    < 0 receive slot -(s+1).
    codes_.clear();
    begin_.assign(static_cast<std::size_t>(n_local) + 1, 0);
    pending_.assign(static_cast<std::size_t>(n_local), 0);
    recv_from_.clear();
    for (long x = first; x < last; ++x) {
      const auto i = static_cast<std::size_t>(x - first);
      begin_[i] = codes_.size();
      g_.for_each_input(t, x, [&](long p) {
        if (p >= lo_ && p < hi_) {
          codes_.push_back(p - lo_);
          return;
        }
        long slot;
        const auto up = static_cast<std::size_t>(p);
        if (slot_stamp_[up] == stamp_) {
          slot = slot_of_point_[up];
        } else {
          slot = static_cast<long>(recv_from_.size());
          recv_from_.push_back(p);
          slot_stamp_[up] = stamp_;
          slot_of_point_[up] = slot;
        }
        codes_.push_back(-(slot + 1));
        ++pending_[i];
      });
    }
    begin_[static_cast<std::size_t>(n_local)] = codes_.size();

    // Consumers of each receive slot (CSR).
    const std::size_t n_slots = recv_from_.size();
    users_begin_.assign(n_slots + 1, 0);
    for (long code : codes_)
      if (code < 0) ++users_begin_[static_cast<std::size_t>(-code - 1) + 1];
    for (std::size_t s = 0; s < n_slots; ++s) users_begin_[s + 1] += users_begin_[s];
    users_.resize(users_begin_[n_slots]);
    fill_.assign(users_begin_.begin(), users_begin_.end() - 1);
    for (long i = 0; i < n_local; ++i)
      for (std::size_t k = begin_[static_cast<std::size_t>(i)]; k < begin_[static_cast<std::size_t>(i) + 1]; ++k)
        if (codes_[k] < 0) users_[fill_[static_cast<std::size_t>(-codes_[k] - 1)]++] = i;

    // 2. Receives.
    if (recv_buf_.size() < n_slots * ob_) recv_buf_.resize(n_slots * ob_);
    recv_reqs_.assign(n_slots, MPI_REQUEST_NULL);
    for (std::size_t s = 0; s < n_slots; ++s) {
      long p = recv_from_[s];
      long src = owner(p);
      MPI_Irecv(recv_buf_.data() + s * ob_, static_cast<int>(ob_), MPI_BYTE, static_cast<int>(src),
                tag(p, src, t), comm_, &recv_reqs_[s]);
    }

    // 3. Sends of this rank's outputs of t-1.
    send_reqs_.clear();
    for (long p = std::max(lo_, last_offset); p < std::min(hi_, last_offset + last_width); ++p) {
      const char* buf = prev + static_cast<std::size_t>(p - lo_) * ob_;
      const long send_stamp = ++send_stamp_;
      const int my_tag = tag(p, rank_, t);
      g_.for_each_output(t - 1, p, [&](long c) {
        if (c >= lo_ && c < hi_) return;
        long dest = owner(c);
        if (rank_stamp_[static_cast<std::size_t>(dest)] == send_stamp) return;
        rank_stamp_[static_cast<std::size_t>(dest)] = send_stamp;
        send_reqs_.push_back(MPI_REQUEST_NULL);
        MPI_Isend(buf, static_cast<int>(ob_), MPI_BYTE, static_cast<int>(dest), my_tag, comm_,
                  &send_reqs_.back());
      });
    }

    // 4. Points with local inputs only, then the others as their inputs arrive.
    for (long i = 0; i < n_local; ++i)
      if (pending_[static_cast<std::size_t>(i)] == 0) execute(t, first + i, prev);
    std::size_t outstanding = n_slots;
    done_.resize(n_slots);
    while (outstanding > 0) {
      int n_done = 0;
      MPI_Waitsome(static_cast<int>(n_slots), recv_reqs_.data(), &n_done, done_.data(), MPI_STATUSES_IGNORE);
      if (n_done == MPI_UNDEFINED) break;
      outstanding -= static_cast<std::size_t>(n_done);
      for (int d = 0; d < n_done; ++d) {
        const auto s = static_cast<std::size_t>(done_[static_cast<std::size_t>(d)]);
        for (std::size_t k = users_begin_[s]; k < users_begin_[s + 1]; ++k) {
          const long i = users_[k];
          if (--pending_[static_cast<std::size_t>(i)] == 0) execute(t, first + i, prev);
        }
      }
    }

    // 5. Sends must be done before step t+1 overwrites nothing, but step t+2
    //    reuses this output buffer; waiting here keeps it simple and is
    //    deadlock-free since every rank posted its receives of step t first.
    MPI_Waitall(static_cast<int>(send_reqs_.size()), send_reqs_.data(), MPI_STATUSES_IGNORE);
  }

  void execute(long t, long x, const char* prev) {
    const auto i = static_cast<std::size_t>(x - std::max(lo_, g_.offset_at(t)));
    const auto local = static_cast<std::size_t>(x - lo_);
    ptrs_.clear();
    for (std::size_t k = begin_[i]; k < begin_[i + 1]; ++k) {
      long code = codes_[k];
      ptrs_.push_back(code >= 0 ? prev + static_cast<std::size_t>(code) * ob_
                                : recv_buf_.data() + static_cast<std::size_t>(-code - 1) * ob_);
    }
    sizes_.assign(ptrs_.size(), ob_);
    char* out = out_[t & 1].data() + local * ob_;
    g_.execute_point(t, x, out, ob_, ptrs_.data(), sizes_.data(), ptrs_.size(),
                     scratch_.data() + local * sb_, sb_);
    // Testing aid: corrupt the output of (1, first point of the last rank).
    if (inject_ && t == 1 && x == lo_ && rank_ == nranks_ - 1) out[ob_ - 1] ^= 0x10;
  }

  const task_graph& g_;
  MPI_Comm comm_;
  bool inject_;
  int rank_ = 0, nranks_ = 1;
  long lo_ = 0, hi_ = 0;
  std::size_t ob_ = 0, sb_ = 0;
  int tag_shift_ = 0;
  std::vector<char> out_[2];
  std::vector<char> scratch_;
  std::vector<char> recv_buf_;
  std::vector<MPI_Request> recv_reqs_, send_reqs_;
  std::vector<int> done_;
  std::vector<long> slot_stamp_, slot_of_point_, rank_stamp_;
  std::vector<long> codes_, recv_from_, users_, pending_;
  std::vector<std::size_t> begin_, users_begin_, fill_;
  std::vector<const char*> ptrs_;
  std::vector<std::size_t> sizes_;
  long stamp_ = 0, send_stamp_ = 0;
};

}  // namespace

std::unique_ptr<graph_runner> make_aggregate_runner(const task_graph& g, MPI_Comm comm, const options& opt,
                                                    int tag_ub) {
  return std::make_unique<aggregate_runner>(g, comm, opt, tag_ub);
}

}  // namespace taskbench_mpi
