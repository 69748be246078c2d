// weft — one-sided remote memory access (RMA): put and get into memory that
// a rank registered, with completion by futures or by completion queues.
//
// @code
//   namespace rma = weft::rma;
//   std::vector<double> inbox(100);
//   rma::completion_queue arrivals;
//   rma::segment seg = rma::register_memory(inbox.data(), 800, &arrivals);
//   weft::barrier();                                  // registered on every rank
//
//   // given: int right; std::vector<double> mine;
//   auto done = rma::put(right, seg.id(), 0, mine.data(), 800,   // into right's inbox,
//                        {.notify = 42});             // + an entry in right's `arrivals`
//   rma::completion c = arrivals.wait();              // the left neighbour's data is here
//   done.get();                                       // mine is in place at `right`
//
//   double first;
//   rma::get(right, seg.id(), 0, &first, 8).get();    // reads back right's inbox[0]: mine
// @endcode
//
// Memory is registered on its own rank; it is addressed remotely by (rank,
// segment id, byte offset). Ids are assigned per rank in registration order
// (0, 1, 2, ...), so ranks that register their buffers in the same order get
// the same id for the same logical buffer — a symmetric allocation with no
// collective call. Register before anyone accesses the memory (typically: all
// ranks register, then a barrier).
//
// Completion levels of a put:
//   local   the source buffer may be reused (the runtime no longer reads it);
//           says nothing about the target.
//   remote  the data is in the target's segment: a later get sees it, and a
//           notification, if asked for, is already in the target's queue.
//           Remote completion implies local completion.
// A get completes when the data is in `dst`.
//
// Ordering: none between operations, not even between two puts from the same
// task to the same target (they may travel as separate messages). Order them
// with their completions (wait for remote completion of the first before
// issuing the second). Concurrent puts to overlapping bytes leave those bytes
// unspecified; reading target memory while a put writes it is a data race —
// the target learns that data is in place from a notification entry, or from
// a message / barrier that follows the origin's remote completion.
//
// Lifetimes (not checked): registered memory stays valid until deregistered;
// deregister (and free) only once no operation targets it any more (e.g.
// after a barrier that follows every completion); `src` stays valid and
// unmodified until local completion, `dst` until the get completes; a
// completion_queue outlives every operation and segment that reports to it.
//
// Errors that end the job with a message naming the origin and target ranks,
// the segment, the offset and the size: access outside a segment's bounds, an
// unknown or deregistered segment id, a nonexistent rank, a notified put into
// a segment without an arrivals queue. They are detected on the origin when
// the target lives in the same process, else on the target. Calls that are
// wrong on the spot (null buffers, deregistering twice) throw instead.
//
// Every call works from any task on any rank, on both backends (smp ranks in
// one process, mpi ranks in separate processes), concurrently from many
// tasks; put and get return without waiting. See docs/RMA.md.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

#include "weft/sched.hpp"

namespace weft::rma {

/// Names a registered segment on its rank (see register_memory).
using segment_id = std::uint32_t;

/// What a completion_queue entry reports.
enum class completion_kind : std::uint8_t {
  put_local,   // a put reached local completion (its source may be reused)
  put_remote,  // a put reached remote completion (its data is at the target)
  get,         // a get completed (its data is in dst)
  arrival,     // a notified put from another rank (or this one) landed in a segment of this rank
};

/// One entry of a completion_queue.
struct completion {
  completion_kind kind = completion_kind::get;
  int rank = -1;             // put/get: the target rank; arrival: the rank that put
  segment_id segment = 0;    // the segment written or read (on the target)
  std::size_t offset = 0;    // byte offset in that segment
  std::size_t bytes = 0;     // length of the transfer
  std::uint64_t context = 0; // put/get: the context given to the call; arrival: the put's tag
};

/// A thread-safe queue of completions. Many producers (communication
/// progress runs on any worker of the rank, or on the progress thread) and
/// any number of consumers. Not movable: operations in flight point to it.
class completion_queue {
 public:
  completion_queue() = default;
  completion_queue(const completion_queue&) = delete;
  completion_queue& operator=(const completion_queue&) = delete;

  /// Takes the oldest entry into `out`; false (at once) if there is none.
  bool poll(completion& out);

  /// Takes the oldest entry, waiting for one if the queue is empty. Inside a
  /// task this suspends only the task: the worker runs other tasks (and
  /// drives communication) meanwhile. From a plain thread it blocks.
  completion wait();

  /// Entries waiting now (a snapshot: producers may add more at any time).
  std::size_t size() const noexcept { return size_.load(std::memory_order_acquire); }
  bool empty() const noexcept { return size() == 0; }

  /// Appends an entry and wakes a waiter. The runtime calls this; so may
  /// you (e.g. to hand a consumer a sentinel).
  void push(const completion& c);

 private:
  mutable std::mutex mutex_;
  std::deque<completion> entries_;
  std::atomic<std::size_t> size_{0};
  std::deque<promise<void>> waiters_;  // tasks blocked in wait(), oldest first
};

class segment;

/// Registers [base, base + bytes) of this rank's memory for remote access
/// and returns its handle; its id is the number of segments this rank
/// registered before (0 for the first). If `arrivals` is given, notified
/// puts into this segment report there (entries of kind `arrival`).
/// Throws std::invalid_argument for a null `base` or zero `bytes`.
segment register_memory(void* base, std::size_t bytes, completion_queue* arrivals = nullptr);

/// Ends remote access to `s` (later accesses are an error that ends the job)
/// and empties the handle. The id is not reused. Call it on the rank that
/// registered `s`, once nothing targets it any more. Throws
/// std::invalid_argument for an empty handle, a segment already deregistered,
/// or a call from another rank.
void deregister(segment& s);

/// A registered segment of this rank (a plain value handle; copies name the
/// same registration).
class segment {
 public:
  segment() = default;
  segment_id id() const noexcept { return id_; }
  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  int rank() const noexcept { return rank_; }  // the rank that registered it
  bool valid() const noexcept { return data_ != nullptr; }
  explicit operator bool() const noexcept { return valid(); }

 private:
  friend segment register_memory(void*, std::size_t, completion_queue*);
  segment(segment_id id, void* data, std::size_t size, int rank) noexcept
      : id_(id), data_(data), size_(size), rank_(rank) {}
  segment_id id_ = 0;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  int rank_ = -1;
};

/// Which completion of a put is reported.
enum class completion_level : std::uint8_t {
  local,   // the source may be reused (no acknowledgement travels back)
  remote,  // the data is at the target (one acknowledgement message more)
};

struct put_options {
  /// When the returned future becomes ready / which entry the queue gets.
  completion_level level = completion_level::remote;
  /// If set: once the data is in place, the target segment's arrivals queue
  /// gets {arrival, this rank, segment, offset, bytes, tag = *notify}.
  std::optional<std::uint64_t> notify;
};

/// Copies `bytes` bytes from `src` into segment `seg` of rank `rank` at byte
/// `offset`. The future becomes ready at the completion level of `opts`.
future<void> put(int rank, segment_id seg, std::size_t offset, const void* src, std::size_t bytes,
                 put_options opts = {});

/// The same, reporting to `cq` instead: one entry, of kind put_local or
/// put_remote per `opts.level`, carrying `context`. No future is allocated
/// (the form for many small operations).
void put(int rank, segment_id seg, std::size_t offset, const void* src, std::size_t bytes, completion_queue& cq,
         std::uint64_t context, put_options opts = {});

/// Copies `bytes` bytes at byte `offset` of segment `seg` of rank `rank`
/// into `dst`. The future becomes ready once `dst` holds them.
future<void> get(int rank, segment_id seg, std::size_t offset, void* dst, std::size_t bytes);

/// The same, reporting one entry of kind `get` carrying `context` to `cq`.
void get(int rank, segment_id seg, std::size_t offset, void* dst, std::size_t bytes, completion_queue& cq,
         std::uint64_t context);

}  // namespace weft::rma
