// weft offload — devices: every device of every rank, with a global id.
//
// @code
//   for (const weft::device& d : weft::devices())       // rank-major ids
//     std::printf("%d on rank %d, %zu bytes\n", d.id(), d.rank(), d.memory());
// @endcode
//
// A `cpu` device is a share of its rank's workers with a memory arena of its
// own (host memory of that rank, apart from the program's objects): kernels
// run on the rank's workers, data moves in and out of the arena by explicit
// copies, as with an accelerator. Every rank has --weft:cpu-devices of them
// (default 1), each with --weft:cpu-device-memory bytes (default 1G).
// When the build has CUDA, a rank's cuda devices follow its cpu devices,
// one per GPU it sees (none without a GPU); their kernels are launchers
// (weft/offload/cuda.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft {

enum class device_kind : std::uint8_t { cpu = 0, cuda = 1 };

/// "cpu" or "cuda".
const char* to_string(device_kind k) noexcept;

/// A device of some rank. A plain value; compare by id.
class device {
 public:
  device() noexcept = default;
  int id() const noexcept { return id_; }
  int rank() const noexcept { return rank_; }
  device_kind kind() const noexcept { return kind_; }
  std::size_t memory() const noexcept { return memory_; }
  /// Position among its rank's devices.
  int local_index() const noexcept { return local_; }
  /// False for a default-constructed device or an id that does not exist.
  bool valid() const noexcept { return rank_ >= 0; }
  bool operator==(const device& o) const noexcept { return id_ == o.id_; }

 private:
  friend device device_at(int id) noexcept;
  int id_ = -1;
  int rank_ = -1;
  int local_ = -1;
  device_kind kind_ = device_kind::cpu;
  std::size_t memory_ = 0;
};

/// Every device of every rank, ordered by global id: rank 0's devices
/// first, then rank 1's, ... Call from inside the runtime.
std::vector<device> devices();
/// Those of one kind, in the same order (host kernels need cpu devices,
/// launchers cuda devices).
std::vector<device> devices(device_kind kind);
/// How many devices the job has (all ranks).
int num_devices();
/// The device with global id `id`; not valid() when there is none (using it
/// reports an error naming the id).
device device_at(int id) noexcept;
/// The devices of `rank`.
std::vector<device> devices_of(int rank);

namespace detail {
/// "device 3 (cpu, rank 1)": how errors name a device.
std::string describe_device(int id);
/// Throws std::out_of_range naming `id` when the device does not exist.
void check_device(int id);
}  // namespace detail

}  // namespace weft
