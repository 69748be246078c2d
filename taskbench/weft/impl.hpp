// Task Bench on weft: the implementations behind `taskbench_weft -impl NAME`.
#pragma once
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "taskbench/core.hpp"

namespace taskbench_weft {

/// -weft-inject-corruption (testing): the last rank flips a byte of one
/// output it sends to another rank at timestep 1; the run must fail.
extern bool inject_corruption;

/// -weft-builders auto|one|per-worker: who builds a rank's dataflow nodes,
/// one task or one per worker for its block of points (see dataflow.cpp);
/// auto: per worker when few inputs cross workers. For experiments and
/// tests; the default is auto.
enum class builders { automatic, one, per_worker };
extern builders builders_mode;

/// -weft-offload-devices auto|cpu|cuda: the devices -impl offload runs its
/// points on; auto: the GPUs when the job has some and the kernel runs on
/// them (see offload.cpp), else the cpu devices.
enum class offload_devices_kind { automatic, cpu, cuda };
extern offload_devices_kind offload_kind;

/// Output of one task: `output_bytes_per_task` bytes of (t, x) pairs. Up
/// to 48 bytes (Task Bench's default is 16) are held inline: a dataflow
/// task's output then lives inside its future's state, so no task allocates
/// for it, and a consumer on another core finds the data on the lines it
/// reads to see that the future is ready.
class buffer {
 public:
  static constexpr std::size_t inline_bytes = 48;
  buffer() noexcept = default;
  explicit buffer(std::size_t n) : size_(n) {
    if (n > inline_bytes) heap_.resize(n);
  }
  buffer(const char* first, const char* last) : buffer(static_cast<std::size_t>(last - first)) {
    if (size_ != 0) std::memcpy(data(), first, size_);
  }
  explicit buffer(std::vector<char>&& bytes) : size_(bytes.size()) {
    if (size_ > inline_bytes)
      heap_ = std::move(bytes);
    else if (size_ != 0)
      std::memcpy(inline_, bytes.data(), size_);
  }
  char* data() noexcept { return size_ > inline_bytes ? heap_.data() : inline_; }
  const char* data() const noexcept { return size_ > inline_bytes ? heap_.data() : inline_; }
  std::size_t size() const noexcept { return size_; }

 private:
  std::size_t size_ = 0;
  char inline_[inline_bytes];
  std::vector<char> heap_;
};

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

/// Fork-join (Itoyori's structure): rank 0's root task forks each
/// timestep's points, any rank steals them; outputs in global memory.
void run_forkjoin(const taskbench::app& app);

/// One weft::spawn'ed task per point and timestep (ItoyoriFBC's
/// structure); outputs travel as the values of their global futures.
void run_futures(const taskbench::app& app);

/// Rank 0 builds every task as a target task on the devices of all ranks
/// (weft/offload.hpp); outputs move device to device.
void run_offload(const taskbench::app& app);

/// The devices -weft-offload-devices asks for are not in this job (no GPU):
/// the program ends with status 77, "cannot run here", not a failed run.
struct devices_absent : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace taskbench_weft
