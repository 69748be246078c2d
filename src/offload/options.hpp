// offload's --weft: options. Registered with the runtime's option table at
// load time (runtime/option_registry.hpp); read once, at the first use of
// offload_config() (device_state.cpp).
#pragma once
#include <cstddef>

namespace weft::detail {

/// The most GPUs --weft:cuda-devices may name; its default, so that every
/// GPU a rank sees is listed.
inline constexpr int max_cuda_devices = 1024;

struct offload_option_values {
  int cpu_devices = 1;                                   // per rank, the same on every rank
  std::size_t cpu_device_memory = std::size_t{1} << 30;  // of each cpu device
  int cuda_devices = max_cuda_devices;                   // the most GPUs each rank lists (0: none)
};

/// The values the last weft::init parsed (the defaults before one).
const offload_option_values& offload_options() noexcept;

}  // namespace weft::detail
