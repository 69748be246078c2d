// The devices a rank owns: checked allocations, cpu devices, the rank's state.
#include "offload/device_state.hpp"

#include "offload/options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "am/rank_comm.hpp"
#include "runtime/runtime_state.hpp"
#include "sched/scheduler.hpp"
#include "trace/recorder.hpp"

namespace weft::detail {

namespace {
constexpr std::align_val_t arena_alignment{64};
}  // namespace

const offload_settings& offload_config() {
  static const offload_settings s = [] {
    offload_settings o;
    const offload_option_values& opts = offload_options();
    if (runtime_state() != nullptr) {
      o.cpu_devices = opts.cpu_devices;
      o.cpu_memory = opts.cpu_device_memory;
    }
    // With --weft:cuda-devices=0 the CUDA runtime is not even started.
    const int cap = opts.cuda_devices;
    const cuda_inventory gpus = cap == 0 ? cuda_inventory{} : probe_cuda();
    o.cuda_devices = std::min(gpus.count, cap);
    o.cuda_memory.assign(gpus.memory.begin(), gpus.memory.begin() + o.cuda_devices);
    return o;
  }();
  return s;
}

std::string local_device::name() const { return describe_device(id_); }

std::uint64_t local_device::allocate(std::size_t bytes) {
  const std::size_t rounded = bytes == 0 ? 1 : bytes;
  {
    std::lock_guard g(mutex_);
    if (rounded > capacity_ - used_)
      throw std::length_error("weft offload: " + name() + ": allocation of " + std::to_string(bytes) +
                              " bytes exceeds its memory (" + std::to_string(capacity_ - used_) + " of " +
                              std::to_string(capacity_) + " bytes free)");
    used_ += rounded;
  }
  void* p = nullptr;
  try {
    p = obtain(rounded);
  } catch (...) {
    std::lock_guard g(mutex_);
    used_ -= rounded;
    throw;
  }
  const auto a = reinterpret_cast<std::uint64_t>(p);
  std::lock_guard g(mutex_);
  live_.emplace(a, rounded);
  return a;
}

std::size_t local_device::bytes_in_use() {
  std::lock_guard g(mutex_);
  return used_;
}

void local_device::free(std::uint64_t address) {
  {
    std::lock_guard g(mutex_);
    auto it = live_.find(address);
    if (it == live_.end())
      throw std::invalid_argument("weft offload: " + name() + ": free of an address that is not a live allocation");
    used_ -= it->second;
    live_.erase(it);
  }
  release(reinterpret_cast<void*>(address));
}

void local_device::release_all() noexcept {
  for (auto& [a, bytes] : live_) release(reinterpret_cast<void*>(a));
  live_.clear();
}

std::byte* local_device::resolve(std::uint64_t address, std::size_t bytes) {
  std::lock_guard g(mutex_);
  auto it = live_.upper_bound(address);
  if (it != live_.begin()) {
    --it;
    if (address - it->first <= it->second && bytes <= it->second - (address - it->first))
      return reinterpret_cast<std::byte*>(address);
  }
  char range[80];
  std::snprintf(range, sizeof range, "bytes [%#llx, +%zu)", static_cast<unsigned long long>(address), bytes);
  throw std::out_of_range("weft offload: " + name() + ": " + range + " are not inside a live allocation");
}

std::runtime_error kernel_failure(const std::string& device, std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return std::runtime_error("weft offload: kernel failed on " + device + ": " + x.what());
  } catch (...) {
    return std::runtime_error("weft offload: kernel failed on " + device + " (exception not derived from std::exception)");
  }
}

// ---- cpu devices: the rank's memory, the rank's workers --------------------------

void* cpu_device::obtain(std::size_t bytes) { return ::operator new(bytes, arena_alignment); }

void cpu_device::release(void* p) noexcept { ::operator delete(p, arena_alignment); }

void cpu_device::write(std::byte* to, const std::byte* host, std::size_t bytes) {
  transfers_.submit([&] { std::memcpy(to, host, bytes); }).get();
}

void cpu_device::read(std::byte* host, const std::byte* from, std::size_t bytes) {
  transfers_.submit([&] { std::memcpy(host, from, bytes); }).get();
}

void cpu_device::copy_within(std::byte* to, const std::byte* from, std::size_t bytes) {
  transfers_.submit([&] { std::memmove(to, from, bytes); }).get();
}

void cpu_device::run_kernel(const std::function<void()>& kernel, const void* kernel_name) {
  kernels_
      .submit([&] {
        publish_sends_now();  // what this rank sent meanwhile leaves before the kernel holds the worker
        trace::name_running(trace::kind::target_kernel, kernel_name);
        try {
          kernel();
        } catch (...) {
          throw kernel_failure(name(), std::current_exception());
        }
      })
      .get();
}

void cpu_device::run_launcher(const std::function<void(cuda_stream)>&, const void*) {
  throw std::invalid_argument("weft offload: " + name() +
                              " runs host kernels: a launcher (a kernel taking a cudaStream_t first) needs a cuda device");
}

offload_rank::offload_rank(rank_comm& c) : rank(c.rank) {
  const offload_settings& s = offload_config();
  const int first = rank * s.per_rank();
  for (int i = 0; i < s.cpu_devices; ++i)
    devices.push_back(std::make_unique<cpu_device>(first + i, rank, s.cpu_memory));
  for (int g = 0; g < s.cuda_devices; ++g)
    devices.push_back(make_cuda_device(first + s.cpu_devices + g, rank, g, s.cuda_memory[static_cast<std::size_t>(g)]));
}

local_device& local_device_of(int id) {
  offload_rank& me = layer_state<offload_rank>(current_comm());
  const int n = offload_config().per_rank();
  if (id < me.rank * n || id >= (me.rank + 1) * n)
    throw std::invalid_argument("weft offload: " + describe_device(id) + " is not a device of rank " +
                                std::to_string(me.rank));
  return *me.devices[static_cast<std::size_t>(id - me.rank * n)];
}

}  // namespace weft::detail
