// The job's devices: every rank has the same ones (--weft:cpu-devices cpu
// devices, then the GPUs it sees as cuda devices; every rank must see as
// many), so a global id names its rank without asking anyone.
#include <stdexcept>
#include <string>

#include "offload/device_state.hpp"
#include "weft/offload/target.hpp"
#include "weft/runtime.hpp"

namespace weft {

const char* to_string(device_kind k) noexcept { return k == device_kind::cpu ? "cpu" : "cuda"; }

int num_devices() { return nranks() * detail::offload_config().per_rank(); }

device device_at(int id) noexcept {
  device d;
  d.id_ = id;
  const detail::offload_settings& s = detail::offload_config();
  const int per_rank = s.per_rank();
  if (id >= 0 && id < nranks() * per_rank) {
    d.rank_ = id / per_rank;
    d.local_ = id % per_rank;
    const bool gpu = d.local_ >= s.cpu_devices;
    d.kind_ = gpu ? device_kind::cuda : device_kind::cpu;
    d.memory_ = gpu ? s.cuda_memory[static_cast<std::size_t>(d.local_ - s.cpu_devices)] : s.cpu_memory;
  }
  return d;
}

std::vector<device> devices() {
  std::vector<device> all;
  for (int i = 0, n = num_devices(); i < n; ++i) all.push_back(device_at(i));
  return all;
}

std::vector<device> devices(device_kind kind) {
  std::vector<device> some;
  for (const device& d : devices())
    if (d.kind() == kind) some.push_back(d);
  return some;
}

std::vector<device> devices_of(int rank) {
  std::vector<device> mine;
  const int per_rank = detail::offload_config().per_rank();
  for (int i = 0; i < per_rank; ++i) mine.push_back(device_at(rank * per_rank + i));
  return mine;
}

namespace detail {

std::string describe_device(int id) {
  const device d = device_at(id);
  if (!d.valid()) return "device " + std::to_string(id);
  return "device " + std::to_string(id) + " (" + to_string(d.kind()) + ", rank " + std::to_string(d.rank()) + ")";
}

void check_device(int id) {
  if (!device_at(id).valid())
    throw std::out_of_range("weft offload: no device " + std::to_string(id) + " (this job has " +
                            std::to_string(num_devices()) + " devices: " + std::to_string(nranks()) + " ranks x " +
                            std::to_string(offload_config().per_rank()) + ")");
}

std::exception_ptr device_error(int id) {
  try {
    check_device(id);
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

}  // namespace detail
}  // namespace weft
