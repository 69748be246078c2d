// Internal: the devices a rank owns. Every device tracks its live
// allocations (so every access is checked); how memory is obtained, how
// bytes move and how kernels run is up to its kind: a cpu device is an arena
// of this rank's memory with two queues on this rank's workers (transfers
// and kernels), a cuda device (src/offload/cuda/) is a GPU with a copy
// stream and a compute stream.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <exception>
#include <string>
#include <vector>

#include "offload/serial_queue.hpp"
#include "offload/task_table.hpp"
#include "weft/offload/cuda.hpp"
#include "weft/offload/device.hpp"

namespace weft::detail {

struct rank_comm;

/// Settings every rank reads the same way (options.hpp, and the GPUs found).
struct offload_settings {
  int cpu_devices = 1;                            // --weft:cpu-devices
  std::size_t cpu_memory = std::size_t{1} << 30;  // --weft:cpu-device-memory
  int cuda_devices = 0;                           // GPUs this rank sees (--weft:cuda-devices caps it)
  std::vector<std::size_t> cuda_memory;           // of each GPU, by ordinal (every rank sees the same)
  int per_rank() const noexcept { return cpu_devices + cuda_devices; }
};
const offload_settings& offload_config();

/// What the CUDA part reports about this process's GPUs (none without it).
struct cuda_inventory {
  int count = 0;
  std::vector<std::size_t> memory;  // of each GPU, by ordinal
};
cuda_inventory probe_cuda() noexcept;

class local_device {
 public:
  local_device(int id, int rank, std::size_t capacity) : id_(id), rank_(rank), capacity_(capacity) {}
  virtual ~local_device() = default;
  local_device(const local_device&) = delete;
  local_device& operator=(const local_device&) = delete;

  std::uint64_t allocate(std::size_t bytes);
  void free(std::uint64_t address);
  /// [address, address + bytes) inside one live allocation, else throws
  /// std::out_of_range naming the device and its rank.
  std::byte* resolve(std::uint64_t address, std::size_t bytes);
  std::string name() const;
  int id() const noexcept { return id_; }
  /// Bytes allocated now (each allocation rounded up to one byte at least).
  std::size_t bytes_in_use();

  /// Whether this rank's code may read and write the device's memory
  /// directly (a cpu device's arena).
  virtual bool host_addressable() const noexcept = 0;
  /// Copies that return once done; the calling task is suspended meanwhile.
  virtual void write(std::byte* to, const std::byte* host, std::size_t bytes) = 0;
  virtual void read(std::byte* host, const std::byte* from, std::size_t bytes) = 0;
  virtual void copy_within(std::byte* to, const std::byte* from, std::size_t bytes) = 0;
  /// Runs a host kernel (cpu devices) or a launcher given the device's
  /// compute stream (cuda devices) and returns once it is done; the other
  /// form throws, naming the device. `name`: a code address naming the
  /// kernel in a timeline (null: unnamed).
  virtual void run_kernel(const std::function<void()>& kernel, const void* name) = 0;
  virtual void run_launcher(const std::function<void(cuda_stream)>& launcher, const void* name) = 0;

 protected:
  virtual void* obtain(std::size_t bytes) = 0;
  virtual void release(void* p) noexcept = 0;
  /// Called by the most derived destructor: frees what is still allocated.
  void release_all() noexcept;

 private:
  int id_, rank_;
  std::size_t capacity_, used_ = 0;
  std::mutex mutex_;
  std::map<std::uint64_t, std::size_t> live_;  // address -> bytes
};

class cpu_device final : public local_device {
 public:
  using local_device::local_device;
  ~cpu_device() override { release_all(); }
  bool host_addressable() const noexcept override { return true; }
  void write(std::byte* to, const std::byte* host, std::size_t bytes) override;
  void read(std::byte* host, const std::byte* from, std::size_t bytes) override;
  void copy_within(std::byte* to, const std::byte* from, std::size_t bytes) override;
  void run_kernel(const std::function<void()>& kernel, const void* name) override;
  void run_launcher(const std::function<void(cuda_stream)>& launcher, const void* name) override;

 private:
  void* obtain(std::size_t bytes) override;
  void release(void* p) noexcept override;
  serial_queue transfers_;
  serial_queue kernels_;
};

/// GPU `ordinal` of this process as device `id` (src/offload/cuda/; throws
/// when the build has no CUDA part).
std::unique_ptr<local_device> make_cuda_device(int id, int rank, int ordinal, std::size_t capacity);

struct offload_rank {
  explicit offload_rank(rank_comm& c);
  int rank;
  std::vector<std::unique_ptr<local_device>> devices;
  task_table tasks;  // target tasks that launches here may wait for
};

/// The device with global id `id`, which must belong to the calling rank
/// (else std::invalid_argument naming it).
local_device& local_device_of(int id);

/// The exception a kernel's failure becomes: "kernel failed on <device>: <what>".
std::runtime_error kernel_failure(const std::string& device, std::exception_ptr e);

}  // namespace weft::detail
