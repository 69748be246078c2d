// Internal: the target tasks a device's rank has seen, so that a launch that
// names them as dependencies can wait for them there, without a round trip
// through the rank that launched both.
//
// A record is made by whichever comes first: the task's end, or a launch
// naming it (an "arrival"). The launching rank counts the launches it sent
// that name the task; once that count has come (consumer_counts_arrived)
// and as many arrivals, with the task ended, nothing can ask for the record
// again and it goes. Nothing here assumes that messages keep their order.
#pragma once
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/future.hpp"
#include "weft/offload/launch.hpp"

namespace weft::detail {

class task_table {
 public:
  /// One launch names `task`: the future of its end (its error, if it failed).
  shared_future<void> arrive(const task_token& task);
  void finish(const task_token& task, std::exception_ptr error);
  void count(const consumer_count& c);
  /// Records held (for tests of the bookkeeping).
  std::size_t size();

 private:
  struct record {
    // Made only when a launch arrives before the end: most tasks end before
    // anyone asks, or with nobody asking.
    std::optional<promise<void>> ended;
    shared_future<void> end;
    std::exception_ptr error;
    bool finished = false;
    std::uint64_t arrived = 0;
    std::int64_t expected = -1;  // unknown until the launcher's count comes
  };
  static std::uint64_t key(const task_token& t) noexcept;
  /// Erases `r` when nothing can ask for it again.
  void maybe_forget(std::unordered_map<std::uint64_t, record>::iterator r);

  std::mutex mutex_;
  std::unordered_map<std::uint64_t, record> records_;
};

/// A read of another device's memory, made on that device's rank.
struct fetch_request {
  int device = -1;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

/// This rank's record of `task`, one arrival.
shared_future<void> arrive_here(const task_token& task);
/// On rank `rank`: waits for `tasks` (one arrival each), then makes `reads`
/// there; their bytes, in order. A failed task fails it.
future<std::vector<std::vector<std::byte>>> read_after(int rank, std::vector<task_token> tasks,
                                                       std::vector<fetch_request> reads);
/// The arrivals of a launch that failed before it could wait (no reply).
void abandon_arrivals(int rank, std::vector<task_token> tasks);
/// Sends counts of consumers to rank `rank` on their own (no reply).
void send_consumer_counts(int rank, std::vector<consumer_count> counts);
/// Ends `task` on rank `rank` with an error: its launch could not be sent.
void launch_not_sent(int rank, const task_token& task, const std::string& what);

}  // namespace weft::detail
