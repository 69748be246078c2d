// Cores, the affinity mask the process started with, and pinning workers
// through hwloc (the topology is loaded once per process).
#pragma once
#include <vector>

namespace weft::detail {

/// Physical cores of this machine (at least 1).
int hardware_cores() noexcept;

/// Cores this process may run on: those with a hardware thread in the
/// affinity mask of the thread that first asked (the thread that starts
/// weft, before any worker is pinned; a launcher's or taskset's binding).
/// At least 1.
int allowed_cores() noexcept;

/// Cores of the starting mask that this process holds for its workers, so
/// that no other weft process on this host (another rank of the job, or
/// another job of the same user) pins a worker there while it runs. Each
/// claim is a lock on one byte of a per-user file in /dev/shm (or /tmp):
/// the kernel drops it when the process ends, however it ends, so no stale
/// claim outlives its process.
class core_claim {
 public:
  core_claim() = default;
  /// Claims up to `count` cores of the starting mask that no other process
  /// claimed: first the process's own place, the `count` cores from core
  /// `spread` on (in the mask's order, modulo its cores), then any core
  /// from core `places` on. The cores before `places` are the places of
  /// the other processes of the job on this node (their node-local index
  /// times their workers): taking one would push its owner onto another.
  core_claim(int count, int spread, int places);
  ~core_claim();
  core_claim(core_claim&& o) noexcept;
  core_claim& operator=(core_claim&& o) noexcept;

  /// Cores claimed.
  int size() const noexcept { return static_cast<int>(cores_.size()); }
  /// Pins the calling thread to one hardware thread, inside the starting
  /// mask, of claimed core `i`; for i >= size(), of core (spread + i -
  /// size()) modulo the mask's cores: round-robin over cores that other
  /// workers use too. False if binding failed.
  bool pin_this_thread(int i) const noexcept;

 private:
  void release() noexcept;
  void try_claim(int core) noexcept;
  int fd_ = -1;
  int spread_ = 0;
  std::vector<int> cores_;  // hwloc logical indexes of the claimed cores
};

}  // namespace weft::detail
