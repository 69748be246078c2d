// Task outputs handed over by (timestep, point) between a producer that
// delivers a copy and consumers that take a future of it, whichever comes
// first. dataflow uses two: the mailbox for outputs from other ranks, and
// the exchange between builders of one rank (see dataflow.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "impl.hpp"
#include "weft/weft.hpp"

namespace taskbench_weft {

class output_slots {
 public:
  /// `takers(t, p)`: how many times the output of (t, p) will be taken; a
  /// slot is dropped once it was delivered and taken that often.
  output_slots(long max_width, std::function<int(long, long)> takers)
      : max_width_(max_width), takers_(std::move(takers)) {}

  /// The output of (t, p), ready once delivered. Each taker takes it once.
  weft::shared_future<buffer> take(long t, long p);

  /// The output of (t, p) has been produced. May run its consumers before
  /// returning (so the caller must not rely on anything they may destroy).
  void deliver(long t, long p, buffer&& value);

 private:
  struct slot {
    weft::promise<buffer> promise;
    weft::shared_future<buffer> future;
    int takes_left = 0;
    bool delivered = false;
  };
  std::uint64_t key(long t, long p) const noexcept {
    return static_cast<std::uint64_t>(t) * static_cast<std::uint64_t>(max_width_) + static_cast<std::uint64_t>(p);
  }
  slot& find_or_add(long t, long p);  // with lock_ held

  long max_width_;
  std::function<int(long, long)> takers_;
  std::mutex lock_;
  std::unordered_map<std::uint64_t, slot> slots_;  // key: t * max_width + p
};

}  // namespace taskbench_weft
