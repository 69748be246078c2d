// Launchers for the cuda device tests (launchers.cu): host functions that
// launch a __global__ kernel on the stream they are given.
#pragma once
#include <cstddef>
#include <span>

#include "weft/offload/cuda.hpp"

namespace cuda_test {

/// y += a * x
void saxpy(weft::cuda_stream s, float a, std::span<const float> x, std::span<float> y);
/// out[i] = value * 1000 + i
void fill(weft::cuda_stream s, std::span<int> out, int value);
/// Spins until flag[0] != 0 (or about a few seconds of GPU clock), then
/// writes flag[1] = 1 if it saw the flag, 2 if it gave up.
void wait_for_flag(weft::cuda_stream s, std::span<int> flag);
/// A launch with an invalid configuration (0 threads per block).
void bad_launch(weft::cuda_stream s, std::span<int> out);

}  // namespace cuda_test
