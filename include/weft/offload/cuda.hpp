// weft offload — the stream a launcher for a cuda device receives.
//
// @code{.cu}
//   __global__ void saxpy_gpu(float a, const float* x, float* y, std::size_t n);
//   void saxpy(cudaStream_t s, float a, std::span<const float> x, std::span<float> y) {
//     saxpy_gpu<<<(y.size() + 255) / 256, 256, 0, s>>>(a, x.data(), y.data(), y.size());
//   }
//   weft::target(gpu, saxpy, 2.0f, weft::map_to(x), weft::map_tofrom(y)).get();
// @endcode
//
// weft::cuda_stream is the CUDA runtime's cudaStream_t (both name
// CUstream_st*), declared here without the CUDA headers so that weft's
// headers build without the toolkit. A kernel whose first parameter is a
// cuda_stream is a launcher: it runs on the host of the device's rank,
// enqueues its work on the stream it is given (the device's compute stream)
// and returns; the target task completes when the stream has run it.
#pragma once

struct CUstream_st;

namespace weft {
using cuda_stream = CUstream_st*;
}  // namespace weft
