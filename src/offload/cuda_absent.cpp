// A build without the CUDA part: no process sees a GPU.
#include <stdexcept>

#include "offload/device_state.hpp"

namespace weft::detail {

cuda_inventory probe_cuda() noexcept { return {}; }

std::unique_ptr<local_device> make_cuda_device(int, int, int, std::size_t) {
  throw std::logic_error("weft offload: this build has no CUDA support (WEFT_CUDA=OFF or no toolkit found)");
}

}  // namespace weft::detail
