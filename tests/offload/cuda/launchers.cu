// The __global__ kernels behind launchers.hpp.
#include "launchers.hpp"

namespace cuda_test {
namespace {

constexpr unsigned block = 256;
unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + block - 1) / block); }

__global__ void saxpy_kernel(float a, const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

__global__ void fill_kernel(int* out, std::size_t n, int value) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = value * 1000 + static_cast<int>(i);
}

__global__ void wait_kernel(volatile int* flag) {
  const long long start = clock64();
  while (flag[0] == 0) {
    if (clock64() - start > 10'000'000'000LL) {
      flag[1] = 2;
      return;
    }
  }
  flag[1] = 1;
}

}  // namespace

void saxpy(weft::cuda_stream s, float a, std::span<const float> x, std::span<float> y) {
  if (y.empty()) return;
  saxpy_kernel<<<blocks_for(y.size()), block, 0, s>>>(a, x.data(), y.data(), y.size());
}

void fill(weft::cuda_stream s, std::span<int> out, int value) {
  if (out.empty()) return;
  fill_kernel<<<blocks_for(out.size()), block, 0, s>>>(out.data(), out.size(), value);
}

void wait_for_flag(weft::cuda_stream s, std::span<int> flag) { wait_kernel<<<1, 1, 0, s>>>(flag.data()); }

void bad_launch(weft::cuda_stream s, std::span<int> out) { fill_kernel<<<1, 0, 0, s>>>(out.data(), out.size(), 0); }

}  // namespace cuda_test
