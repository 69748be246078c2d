// Internal: the devices a rank owns. A cpu device is an arena of this rank's
// memory (live allocations are tracked, so every access is checked) and two
// queues on this rank's workers: transfers and kernels.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "offload/serial_queue.hpp"

namespace weft::detail {

struct rank_comm;

/// Settings every rank reads the same way (environment).
struct offload_settings {
  int cpu_devices = 1;                          // --weft:cpu-devices
  std::size_t cpu_memory = std::size_t{1} << 30;  // --weft:cpu-device-memory
};
const offload_settings& offload_config();

class cpu_device {
 public:
  cpu_device(int id, int rank, std::size_t capacity) : id_(id), rank_(rank), capacity_(capacity) {}
  ~cpu_device();
  std::uint64_t allocate(std::size_t bytes);
  void free(std::uint64_t address);
  /// [address, address + bytes) inside one live allocation, else throws
  /// std::out_of_range naming the device and its rank.
  std::byte* resolve(std::uint64_t address, std::size_t bytes);
  std::string name() const;
  serial_queue transfers;
  serial_queue kernels;

 private:
  int id_, rank_;
  std::size_t capacity_, used_ = 0;
  std::mutex mutex_;
  std::map<std::uint64_t, std::size_t> live_;  // address -> bytes
};

struct offload_rank {
  explicit offload_rank(rank_comm& c);
  int rank;
  std::vector<std::unique_ptr<cpu_device>> devices;
};

/// The device with global id `id`, which must belong to the calling rank
/// (else std::invalid_argument naming it).
cpu_device& local_device(int id);

}  // namespace weft::detail
