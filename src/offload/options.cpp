// offload's --weft: options (options.hpp).
#include "offload/options.hpp"

#include "runtime/option_registry.hpp"

namespace weft::detail {

namespace {
offload_option_values g_values;  // the defaults until a parse; before the registration below

bool register_options() {
  return register_layer_options(
      "offload",
      {int_option("cpu-devices", &g_values.cpu_devices, 1, 64, "1",
                  "CPU devices per rank (every rank must have the same number)"),
       size_option("cpu-device-memory", &g_values.cpu_device_memory, 4 * KiB, std::size_t{1} << 40,
                   "bytes of memory of each CPU device"),
       int_option("cuda-devices", &g_values.cuda_devices, 0, max_cuda_devices, "every GPU the rank sees",
                  "the most GPUs each rank lists as cuda devices, the first N the CUDA runtime shows it (0: none, "
                  "and the CUDA runtime is not started; every rank must list the same number)")});
}

}  // namespace

const offload_option_values& offload_options() noexcept { return g_values; }

}  // namespace weft::detail

// Named in src/offload/CMakeLists.txt so that every program links this file.
extern "C" const bool weft_offload_options = weft::detail::register_options();
