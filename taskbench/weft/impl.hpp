// Task Bench on weft: the implementations behind `taskbench_weft -impl NAME`.
#pragma once
#include <string_view>
#include <vector>

#include "taskbench/core.hpp"

namespace taskbench_weft {

/// -weft-inject-corruption (testing): the last rank flips a byte of one
/// output it sends to another rank at timestep 1; the run must fail.
extern bool inject_corruption;

/// Output of one task: `output_bytes_per_task` bytes of (t, x) pairs.
using buffer = std::vector<char>;

/// Per-point scratch memory of one graph, filled with the magic word.
struct scratch_set {
  explicit scratch_set(const taskbench::task_graph& g);
  char* at(long x) noexcept { return bytes_ == 0 ? nullptr : data_[static_cast<std::size_t>(x)].data(); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::size_t bytes_;
  std::vector<std::vector<char>> data_;
};

/// Every implementation runs all graphs of `app` once, on every rank (each
/// rank does its share), and returns when the run is complete everywhere.
/// A validation failure throws taskbench::validation_error.

/// Each task is a weft::dataflow node over the futures of its inputs; no
/// barrier between timesteps.
void run_dataflow(const taskbench::app& app);

/// Bulk-synchronous: per timestep, every rank runs its points with a
/// parallel loop over its workers after its inputs from other ranks arrived.
void run_spmd(const taskbench::app& app);

}  // namespace taskbench_weft
