// Task outputs that cross ranks, shared by the dataflow and spmd
// implementations. Points are block-distributed over ranks (as Task Bench's
// MPI implementations do); a producer posts its output once to every other
// rank that owns one of its consumers, and the consuming rank finds it by
// (timestep, point) in its mailbox, whichever came first: the message or the
// consumer.
//
// Two mailboxes, one per implementation:
//  * `mailbox` (dataflow): every received output is a shared_future, so a
//    dataflow node can wait on it like on a local output. No barrier between
//    timesteps, so any number of timesteps may be in flight.
//  * `step_mailbox` (spmd): bulk-synchronous, so a rank consumes the outputs
//    of timestep t-1 during its timestep t and never needs more than a few
//    timesteps of them: a fixed window of preallocated slots indexed by
//    (t mod window, producer), filled in place by the message handler, with
//    no lock and no allocation on the common path. A task that still misses
//    inputs leaves its work with the slots, and the handler of the last
//    missing output runs it on the spot (as MPI's Waitsome loop runs a task
//    the moment its receive completes), so that no task switch lies between
//    the arrival of an output and the task that needs it.
//
// Wire format: an output of the default 16 bytes travels with a packed
// 64-bit (run, t, point) key as a 24-byte argument list, which fits the
// transport's inline message (no allocation on either side); larger outputs,
// or keys that do not pack, travel as a byte vector with full-width fields.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "impl.hpp"
#include "output_slots.hpp"
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

namespace wire {

/// The default output size: such outputs travel inline.
inline constexpr std::size_t small_bytes = 16;
using small_payload = std::array<std::byte, small_bytes>;

/// (run, t, p) packed into 64 bits: 8 bits of run stamp, 32 of timestep,
/// 24 of point. `fits` says whether the full values survive.
inline bool fits(long t, long p) noexcept { return t >= 0 && t < (1L << 32) && p >= 0 && p < (1L << 24); }
inline std::uint64_t pack(std::uint64_t run, long t, long p) noexcept {
  return (run & 0xff) << 56 | static_cast<std::uint64_t>(t) << 24 | static_cast<std::uint64_t>(p);
}
inline std::uint64_t run_of(std::uint64_t key) noexcept { return key >> 56; }
inline long t_of(std::uint64_t key) noexcept { return static_cast<long>((key >> 24) & 0xffffffffULL); }
inline long p_of(std::uint64_t key) noexcept { return static_cast<long>(key & 0xffffffULL); }

/// Distinct ranks other than `me.rank` that consume the output of (t, x),
/// in a small inline buffer (a heap vector only past 64 ranks).
class destinations {
 public:
  destinations(const taskbench::task_graph& g, const local_block& me, long t, long x);
  const int* begin() const noexcept { return heap_.empty() ? small_ : heap_.data(); }
  const int* end() const noexcept { return begin() + n_; }
  bool empty() const noexcept { return n_ == 0; }

 private:
  void add(int r);
  int small_[64];
  std::vector<int> heap_;
  std::size_t n_ = 0;
};

/// The run stamps of this rank's mailboxes, and the registered mailbox (ranks
/// of the smp backend share the process, so both are indexed by rank).
std::uint64_t next_run(int rank);
void publish(int rank, void* box);
void* registered(int rank) noexcept;
/// Registered instead of a mailbox that a failing run left: its late
/// outputs are dropped (the failure ends the job).
void* abandoned() noexcept;
[[noreturn]] void stray(long t, long p, std::uint64_t run);

}  // namespace wire

/// dataflow's receiving side for one run of one graph. Registered for the
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

  /// Sends the output of local task (t, x) to every other rank that
  /// consumes it; nothing when there is none.
  void send(long t, long x, const char* data) const;

  /// Message handlers (run on the receiving rank).
  static void arrived(std::uint64_t run, long t, long p, const char* data, std::size_t n);
  static void arrived(std::uint64_t run, long t, long p, std::vector<char>&& data);

 private:
  int local_consumers(long t, long p) const;

  const taskbench::task_graph& g_;
  local_block me_;
  std::uint64_t run_;  // same value on every rank for the same run
  output_slots slots_;
};

/// spmd's receiving side for one run of one graph (see the top of the file).
/// A slot is open for exactly one timestep at a time: slot (k, r) for
/// remote producer r is first open for t = k, and reopened for t + window
/// by step_done(t) once every local consumer of step t's outputs ran. An
/// output that arrives before its slot is open (its producer ran more than a
/// window ahead) waits in a locked map until then.
class step_mailbox {
 public:
  static constexpr long window = 4;
  /// How often a task waiting for outputs yields before it blocks (a round
  /// is ~0.1 us when nothing arrives, so this is some tens of us).
  static constexpr int yield_rounds = 256;

  step_mailbox(const taskbench::task_graph& g, const local_block& me);
  ~step_mailbox();
  step_mailbox(const step_mailbox&) = delete;
  step_mailbox& operator=(const step_mailbox&) = delete;

  /// The output of remote task (t, p), or an empty span if it has not
  /// arrived yet (for a consumer of step t + 1 on this rank).
  std::span<const char> poll(long t, long p) const noexcept {
    const slot& s = at(t, p);
    if (s.state.load(std::memory_order_acquire) != ready(t)) return {};
    return {s.data.data(), s.data.size()};
  }
  /// A job waiting for outputs of remote tasks, and its registrations on
  /// their slots. It stays where it is from start() until wait() returned.
  class pending_job;
  /// Registers `job` for the outputs of remote tasks (t, producers[i]); when
  /// they are all here already it runs at once, in the caller. Otherwise the
  /// message with the last missing output runs it right in its handler (no
  /// task switch between the arrival and the work that needs it), so that
  /// several registered jobs run in the order their inputs arrive.
  void start(long t, const long* producers, std::size_t n, pending_job& job);
  /// Returns once `job` ran (rethrowing what it threw). Meanwhile the caller
  /// lets its worker poll for messages (and so run handlers), then blocks.
  void wait(pending_job& job);

  /// Every local consumer of the outputs of timestep t is done: their slots
  /// open for t + window.
  void step_done(long t);

  /// Sends the output of local task (t, x) to every other rank that
  /// consumes it; nothing when there is none.
  void send(long t, long x, const char* data) const;

  /// Message handlers (run on the receiving rank).
  static void arrived(std::uint64_t run, long t, long p, const char* data, std::size_t n);
  static void arrived(std::uint64_t run, long t, long p, std::vector<char>&& data);

 private:
  /// One registration of a pending_job on one slot.
  struct link {
    link* next = nullptr;
    pending_job* job = nullptr;
  };
  struct alignas(64) slot {
    // open(t) = 2t: waiting for the output of timestep t; ready(t) = 2t + 1.
    std::atomic<std::uint64_t> state{0};
    // Jobs waiting for this slot (a stack), or `closed` once filled.
    std::atomic<link*> waiters{nullptr};
    std::vector<char> data;
  };
  static std::uint64_t open(long t) noexcept { return static_cast<std::uint64_t>(t) << 1; }
  static std::uint64_t ready(long t) noexcept { return (static_cast<std::uint64_t>(t) << 1) | 1; }
  static link* closed() noexcept { return reinterpret_cast<link*>(std::uintptr_t{1}); }

  const slot& at(long t, long p) const noexcept {
    return slots_[static_cast<std::size_t>((t % window) * remote_ + index_[static_cast<std::size_t>(p)])];
  }
  slot& at(long t, long p) noexcept { return const_cast<slot&>(std::as_const(*this).at(t, p)); }

  bool try_fill(long t, long p, const char* data, std::size_t n);
  void keep_early(long t, long p, std::vector<char>&& data);
  void fill(slot& s, long t);
  void take_early(long t);
  static void arrive(pending_job& c) noexcept;
  static void finish(pending_job& c) noexcept;

  const taskbench::task_graph& g_;
  local_block me_;
  std::uint64_t run_;
  long remote_ = 0;          // producers on other ranks that feed this rank
  std::vector<int> index_;   // point -> its index among them (-1: none)
  std::unique_ptr<slot[]> slots_;  // window x remote_
  // Where the outputs of each local point go, per dependence set, when the
  // active points are the same at every timestep (all but dom and tree):
  // ranks dests_[dests_at_[d * local + i] ..  dests_at_[d * local + i + 1]).
  bool fixed_dests_ = false;
  std::vector<std::size_t> dests_at_;
  std::vector<int> dests_;
  std::atomic<long> early_count_{0};
  std::mutex early_lock_;
  std::map<std::pair<long, long>, std::vector<char>> early_;  // (t, p): arrived before its slot opened
};

class step_mailbox::pending_job {
 public:
  /// `fn(ctx)` is the work; `max_producers`: the most outputs it may wait for.
  pending_job(void (*fn)(void*), void* ctx, std::size_t max_producers) : fn_(fn), ctx_(ctx), links_(max_producers) {}
  pending_job(const pending_job&) = delete;
  pending_job& operator=(const pending_job&) = delete;

 private:
  friend class step_mailbox;
  static constexpr int running = 0, blocked = 1, done = 2;
  std::atomic<std::size_t> missing_{0};  // slots to fill, + 1 while start() registers
  std::atomic<int> phase_{running};      // running, blocked (wake_ is set) or done
  weft::promise<void>* wake_ = nullptr;
  void (*fn_)(void*);
  void* ctx_;
  std::exception_ptr error_;
  std::vector<step_mailbox::link> links_;  // one per slot it waits for
};

}  // namespace taskbench_weft
