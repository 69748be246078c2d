// The devices a rank owns: arenas, checked accesses, the rank's state.
#include "offload/device_state.hpp"

#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "am/rank_comm.hpp"
#include "runtime/runtime_state.hpp"
#include "weft/offload/device.hpp"

namespace weft::detail {

namespace {
constexpr std::align_val_t arena_alignment{64};
}  // namespace

const offload_settings& offload_config() {
  static const offload_settings s = [] {
    offload_settings o;
    if (const process_runtime* rt = runtime_state()) {
      o.cpu_devices = rt->opts.cpu_devices;
      o.cpu_memory = rt->opts.cpu_device_memory;
    }
    return o;
  }();
  return s;
}

cpu_device::~cpu_device() {
  for (auto& [a, bytes] : live_) ::operator delete(reinterpret_cast<void*>(a), arena_alignment);
}

std::string cpu_device::name() const { return describe_device(id_); }

std::uint64_t cpu_device::allocate(std::size_t bytes) {
  const std::size_t rounded = bytes == 0 ? 1 : bytes;
  {
    std::lock_guard g(mutex_);
    if (rounded > capacity_ - used_)
      throw std::length_error("weft offload: " + name() + ": allocation of " + std::to_string(bytes) +
                              " bytes exceeds its memory (" + std::to_string(capacity_ - used_) + " of " +
                              std::to_string(capacity_) + " bytes free)");
    used_ += rounded;
  }
  void* p = ::operator new(rounded, arena_alignment);
  const auto a = reinterpret_cast<std::uint64_t>(p);
  std::lock_guard g(mutex_);
  live_.emplace(a, rounded);
  return a;
}

void cpu_device::free(std::uint64_t address) {
  std::size_t bytes = 0;
  {
    std::lock_guard g(mutex_);
    auto it = live_.find(address);
    if (it == live_.end())
      throw std::invalid_argument("weft offload: " + name() + ": free of an address that is not a live allocation");
    bytes = it->second;
    live_.erase(it);
    used_ -= bytes;
  }
  ::operator delete(reinterpret_cast<void*>(address), arena_alignment);
}

std::byte* cpu_device::resolve(std::uint64_t address, std::size_t bytes) {
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

offload_rank::offload_rank(rank_comm& c) : rank(c.rank) {
  const offload_settings& s = offload_config();
  for (int i = 0; i < s.cpu_devices; ++i)
    devices.push_back(std::make_unique<cpu_device>(rank * s.cpu_devices + i, rank, s.cpu_memory));
}

cpu_device& local_device(int id) {
  offload_rank& me = layer_state<offload_rank>(current_comm());
  const int n = offload_config().cpu_devices;
  if (id < me.rank * n || id >= (me.rank + 1) * n)
    throw std::invalid_argument("weft offload: " + describe_device(id) + " is not a device of rank " +
                                std::to_string(me.rank));
  return *me.devices[static_cast<std::size_t>(id - me.rank * n)];
}

}  // namespace weft::detail
