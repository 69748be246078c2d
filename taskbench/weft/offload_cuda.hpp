// -impl offload on GPUs: one Task Bench point as a CUDA kernel (built with
// CUDA only, offload_cuda.cu). It checks its inputs as execute_point does,
// runs compute_bound's arithmetic (64 accumulators, one per thread, `iter`
// rounds of a = a*a + a: 128 FLOPs a round, as on a cpu device) and writes
// its output's (t, x) pairs. A bad input is noted in the device's failure
// words (the first one only); the builder reads them after the graph.
#pragma once
#include <cstdint>

#include "weft/offload/cuda.hpp"

namespace taskbench_weft {

/// What the kernel needs, passed by value (about 1 KiB of parameters).
struct gpu_point {
  static constexpr int max_inputs = 64;
  std::int64_t t = 0, x = 0, iterations = 0;
  char* output = nullptr;
  std::uint64_t output_bytes = 0;
  int n_inputs = 0;
  const char* inputs[max_inputs] = {};
  std::int64_t producers[max_inputs] = {};
  /// Device memory: [0] set to 1 by the first bad input, then its timestep,
  /// point and input index in [1], [2], [3].
  unsigned long long* failure = nullptr;
};

/// Enqueues the point's kernel on `s` (the device's compute stream).
void launch_gpu_point(weft::cuda_stream s, const gpu_point& p);

}  // namespace taskbench_weft
