// Task outputs that cross ranks, shared by the dataflow and spmd
// implementations. Points are block-distributed over ranks (as Task Bench's
// MPI implementations do); a producer posts its output once to every other
// rank that owns one of its consumers, and the consuming rank finds it by
// (timestep, point) in its mailbox as a future, whichever came first: the
// message or the consumer's request.
#pragma once
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "impl.hpp"
#include "weft/weft.hpp"

namespace taskbench_weft {

/// This rank's points of graph g: [first, last) of the max_width index space.
struct local_block {
  local_block(const taskbench::task_graph& g, int rank, int nranks);
  long first, last;
  int rank, nranks;
  long width;
  bool owns(long x) const noexcept { return x >= first && x < last; }
  int owner(long x) const noexcept { return static_cast<int>(taskbench::block_owner(x, nranks, width)); }
};

/// One rank's receiving side for one run of one graph. Registered for the
/// duration of the run; all ranks create theirs, then meet at a barrier
/// before the first output is sent.
class mailbox {
 public:
  mailbox(const taskbench::task_graph& g, const local_block& me);
  ~mailbox();
  mailbox(const mailbox&) = delete;
  mailbox& operator=(const mailbox&) = delete;

  /// The output of remote task (t, p). Every local consumer takes it once.
  weft::shared_future<buffer> take(long t, long p);

  /// Sends (a copy of) the output of local task (t, x) to every other rank
  /// that consumes it; nothing when there is none.
  void send(long t, long x, const buffer& out) const;

 private:
  struct slot {
    weft::promise<buffer> promise;
    weft::shared_future<buffer> future;
    int takes_left = 0;
    bool delivered = false;
  };
  static void arrived(std::uint64_t run, long t, long p, buffer data);
  std::uint64_t key(long t, long p) const noexcept {
    return static_cast<std::uint64_t>(t) * static_cast<std::uint64_t>(g_.max_width) + static_cast<std::uint64_t>(p);
  }
  slot& find_or_add(long t, long p);  // with lock_ held
  int local_consumers(long t, long p) const;

  const taskbench::task_graph& g_;
  local_block me_;
  std::uint64_t run_;  // same value on every rank for the same run
  std::mutex lock_;
  std::unordered_map<std::uint64_t, slot> slots_;  // key: t * max_width + p
};

}  // namespace taskbench_weft
