// Internal to trace: the per-thread buffers, as the writer reads them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trace/recorder.hpp"

namespace weft::trace {

/// One thread's events. Written only by its thread while tracing runs;
/// read by the writer once the threads stopped recording.
struct thread_buffer {
  int rank = 0;
  int tid = 0;           // worker index, or first_other_tid + k
  std::string name;      // "worker W", "main thread", "progress thread"
  std::vector<record> records;
  std::uint64_t dropped = 0;
  std::ptrdiff_t open = -1;  // index of the interval running now, -1: none
  // The kind the next fresh interval gets (a stolen task, taken before it
  // runs), task: none.
  kind next = kind::task;
  // The open interval's label before name_this_interval, which its end
  // returns (valid while `renamed`).
  label before_rename{};
  bool renamed = false;
};

/// Threads that are not workers get tids from here on (per rank).
inline constexpr int first_other_tid = 1000;

/// Every buffer made so far (the writer's view; the lock is taken once per
/// thread, when its buffer is made).
std::vector<thread_buffer*> all_buffers();

}  // namespace weft::trace
