// cuda devices: a GPU of this process with memory from cudaMalloc, a copy
// stream for every transfer and a compute stream for launchers, so a long
// kernel never holds up a copy. Host memory reaches the GPU through pinned
// staging buffers (cudaMallocHost) one fragment at a time: bytes from
// another rank arrive in this rank's memory first (no GPUDirect). Completion:
// the calling task polls an event recorded behind the work, yielding its
// worker between polls, for a short while; work still running then is
// waited for by a stream callback that fulfils a weft promise, on which the
// task is suspended (docs/OFFLOAD.md gives the latencies behind this).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "offload/device_state.hpp"
#include "trace/recorder.hpp"
#include "weft/future.hpp"
#include "weft/this_task.hpp"

static_assert(std::is_same_v<cudaStream_t, weft::cuda_stream>, "weft::cuda_stream must be cudaStream_t");

namespace weft::detail {

cuda_inventory probe_cuda() noexcept {
  int n = 0;
  // No driver, no device, or a driver too old: no cuda devices, not an error.
  if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    return {};
  }
  cuda_inventory found;
  for (int g = 0; g < n; ++g) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, g) != cudaSuccess) break;
    found.memory.push_back(p.totalGlobalMem);
  }
  found.count = static_cast<int>(found.memory.size());
  return found;
}

namespace {

constexpr std::size_t staging_bytes = std::size_t{1} << 20;  // one fragment
constexpr std::size_t staging_depth = 8;                     // fragments in flight per copy
// How long a task polls its work's event before it waits for a stream
// callback instead: past this a worker's time spent polling outweighs the
// callback's extra latency.
constexpr std::chrono::microseconds poll_window{200};

class cuda_device final : public local_device {
 public:
  cuda_device(int id, int rank, int ordinal, std::size_t capacity) : local_device(id, rank, capacity), ordinal_(ordinal) {
    check(cudaSetDevice(ordinal_), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&copies_, cudaStreamNonBlocking), "cudaStreamCreate (copy stream)");
    check(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking), "cudaStreamCreate (compute stream)");
  }
  ~cuda_device() override {
    (void)cudaSetDevice(ordinal_);
    (void)cudaStreamSynchronize(copies_);
    (void)cudaStreamSynchronize(compute_);
    release_all();
    for (void* b : staging_) (void)cudaFreeHost(b);
    for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
    (void)cudaStreamDestroy(copies_);
    (void)cudaStreamDestroy(compute_);
  }

  bool host_addressable() const noexcept override { return false; }

  void write(std::byte* to, const std::byte* host, std::size_t bytes) override {
    select();
    for (std::size_t done = 0; done < bytes;) {
      std::vector<void*> used;
      for (; done < bytes && used.size() < staging_depth; done += std::min(staging_bytes, bytes - done)) {
        const std::size_t n = std::min(staging_bytes, bytes - done);
        used.push_back(take_staging());
        std::memcpy(used.back(), host + done, n);
        if (cudaError_t e = cudaMemcpyAsync(to + done, used.back(), n, cudaMemcpyHostToDevice, copies_)) {
          give_back(used);
          check(e, "cudaMemcpyAsync (host to device)");
        }
      }
      finish(copies_, "host to device copy", &used);
    }
  }

  void read(std::byte* host, const std::byte* from, std::size_t bytes) override {
    select();
    for (std::size_t done = 0; done < bytes;) {
      std::vector<void*> used;
      std::vector<std::size_t> sizes;
      const std::size_t first = done;
      for (; done < bytes && used.size() < staging_depth; done += sizes.back()) {
        sizes.push_back(std::min(staging_bytes, bytes - done));
        used.push_back(take_staging());
        if (cudaError_t e = cudaMemcpyAsync(used.back(), from + done, sizes.back(), cudaMemcpyDeviceToHost, copies_)) {
          give_back(used);
          check(e, "cudaMemcpyAsync (device to host)");
        }
      }
      try {
        finish(copies_, "device to host copy", nullptr);
      } catch (...) {
        give_back(used);
        throw;
      }
      std::size_t at = first;
      for (std::size_t i = 0; i < used.size(); at += sizes[i], ++i) std::memcpy(host + at, used[i], sizes[i]);
      give_back(used);
    }
  }

  void copy_within(std::byte* to, const std::byte* from, std::size_t bytes) override {
    select();
    check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, copies_), "cudaMemcpyAsync (device to device)");
    finish(copies_, "device to device copy", nullptr);
  }

  void run_kernel(const std::function<void()>&, const void*) override {
    throw std::invalid_argument("weft offload: " + name() +
                                " runs launchers: a kernel for a cuda device takes a cudaStream_t first and launches "
                                "its __global__ function on that stream");
  }

  void run_launcher(const std::function<void(cuda_stream)>& launcher, const void* kernel_name) override {
    select();
    trace::name_running(trace::kind::target_kernel, kernel_name);
    try {
      launcher(compute_);
    } catch (...) {
      throw kernel_failure(name(), std::current_exception());
    }
    if (cudaError_t e = cudaGetLastError())
      throw std::runtime_error("weft offload: kernel failed on " + name() + ": launch: " + cudaGetErrorString(e));
    finish(compute_, "kernel", nullptr);
  }

 private:
  void* obtain(std::size_t bytes) override {
    select();
    void* p = nullptr;
    if (cudaError_t e = cudaMalloc(&p, bytes)) {
      (void)cudaGetLastError();
      throw std::length_error("weft offload: " + name() + ": cudaMalloc of " + std::to_string(bytes) +
                              " bytes failed: " + cudaGetErrorString(e));
    }
    return p;
  }
  void release(void* p) noexcept override {
    (void)cudaSetDevice(ordinal_);
    (void)cudaFree(p);
  }

  void select() { check(cudaSetDevice(ordinal_), "cudaSetDevice"); }

  void check(cudaError_t e, const char* call) const {
    if (e == cudaSuccess) return;
    (void)cudaGetLastError();
    throw std::runtime_error("weft offload: " + name() + ": " + call + " failed: " + cudaGetErrorString(e));
  }

  /// Returns once `stream` has run what was enqueued on it, with the
  /// calling task suspended or yielding meanwhile; `staging` (if given) goes
  /// back to the pool then, error or not. Short work is polled: an event
  /// query between yields answers within microseconds, where a stream
  /// callback (run on CUDA's own thread, then waking a worker) adds tens.
  void finish(cudaStream_t stream, const char* what, std::vector<void*>* staging) {
    cudaError_t status = poll(stream);
    if (status == cudaErrorNotReady) status = wait_for_callback(stream, staging);
    if (staging) give_back(*staging);
    check(status, what);
  }

  /// Polls an event behind the work for up to poll_window: the work's
  /// status, or cudaErrorNotReady when it is still running.
  cudaError_t poll(cudaStream_t stream) {
    cudaEvent_t e = take_event();
    cudaError_t status = cudaEventRecord(e, stream);
    const auto until = std::chrono::steady_clock::now() + poll_window;
    while (status == cudaSuccess) {
      status = cudaEventQuery(e);
      if (status != cudaErrorNotReady || std::chrono::steady_clock::now() >= until) break;
      this_task::yield();
      select();  // another task on this worker may have chosen another GPU
    }
    give_event(e);  // recorded again before its next query
    return status;
  }

  /// Suspends the calling task until a stream callback enqueued behind the
  /// work reports it. A stream callback rather than cudaLaunchHostFunc: it
  /// is called with the error when the stream's work failed (a faulting
  /// kernel), where a host function would never run and the task would
  /// wait for ever.
  cudaError_t wait_for_callback(cudaStream_t stream, std::vector<void*>* staging) {
    auto* done = new promise<cudaError_t>;
    future<cudaError_t> f = done->get_future();
    const cudaError_t e = cudaStreamAddCallback(
        stream, [](cudaStream_t, cudaError_t status, void* p) {
          auto* d = static_cast<promise<cudaError_t>*>(p);
          d->set_value(status);  // no CUDA call here: the task reports it
          delete d;
        },
        done, 0);
    if (e != cudaSuccess) {
      delete done;
      if (staging) give_back(*staging);
      check(e, "cudaStreamAddCallback");
    }
    return f.get();
  }

  cudaEvent_t take_event() {
    {
      std::lock_guard g(mutex_);
      if (!free_events_.empty()) {
        cudaEvent_t e = free_events_.back();
        free_events_.pop_back();
        return e;
      }
    }
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    std::lock_guard g(mutex_);
    events_.push_back(e);
    return e;
  }
  void give_event(cudaEvent_t e) {
    std::lock_guard g(mutex_);
    free_events_.push_back(e);
  }

  void* take_staging() {
    {
      std::lock_guard g(mutex_);
      if (!free_staging_.empty()) {
        void* b = free_staging_.back();
        free_staging_.pop_back();
        return b;
      }
    }
    void* b = nullptr;
    check(cudaMallocHost(&b, staging_bytes), "cudaMallocHost (staging buffer)");
    std::lock_guard g(mutex_);
    staging_.push_back(b);
    return b;
  }
  void give_back(std::vector<void*>& used) {
    std::lock_guard g(mutex_);
    free_staging_.insert(free_staging_.end(), used.begin(), used.end());
    used.clear();
  }

  int ordinal_;
  cudaStream_t copies_ = nullptr;
  cudaStream_t compute_ = nullptr;
  std::mutex mutex_;
  std::vector<void*> staging_;       // every pinned buffer, freed with the device
  std::vector<void*> free_staging_;  // those not in use
  std::vector<cudaEvent_t> events_;       // every event made, destroyed with the device
  std::vector<cudaEvent_t> free_events_;  // those not in use
};

}  // namespace

std::unique_ptr<local_device> make_cuda_device(int id, int rank, int ordinal, std::size_t capacity) {
  return std::make_unique<cuda_device>(id, rank, ordinal, capacity);
}

}  // namespace weft::detail
