#include "sched/topology.hpp"

#include <hwloc.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <thread>
#include <utility>

namespace weft::detail {

namespace {

struct topo {
  hwloc_topology_t t = nullptr;
  int cores = 1;
  hwloc_bitmap_t start_mask = nullptr;  // the first asking thread's binding: the process's, before pinning
  std::vector<int> allowed;            // logical indexes of the cores with a PU in start_mask
  topo() {
    if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0) {
      t = nullptr;
      cores = static_cast<int>(std::thread::hardware_concurrency());
      if (cores <= 0) cores = 1;
      return;
    }
    cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    if (cores <= 0) cores = 1;
    start_mask = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(t, start_mask, HWLOC_CPUBIND_THREAD) != 0)
      hwloc_bitmap_copy(start_mask, hwloc_topology_get_allowed_cpuset(t));
    for (int i = 0; i < cores; ++i)
      if (hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
          c != nullptr && hwloc_bitmap_intersects(c->cpuset, start_mask))
        allowed.push_back(i);
  }
  ~topo() {
    if (start_mask != nullptr) hwloc_bitmap_free(start_mask);
    if (t != nullptr) hwloc_topology_destroy(t);
  }
};
topo& get() {
  static topo instance;
  return instance;
}
std::mutex bind_mutex;  // hwloc topology objects are not safe for concurrent use

/// The claim file: one byte per core, locked by the process holding it.
/// Per user: another user's file could not be opened for writing (and
/// /tmp's sticky bit refuses even to open it).
int open_claim_file() noexcept {
  for (const char* dir : {"/dev/shm", "/tmp"}) {
    char path[128];
    std::snprintf(path, sizeof path, "%s/weft-cores-%u", dir, static_cast<unsigned>(getuid()));
    const int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
  }
  return -1;
}

/// A process-wide (fcntl) lock on byte `core`: released when the process
/// closes the file or ends; never held against the process itself.
bool lock_byte(int fd, int core, short type) noexcept {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = core;
  l.l_len = 1;
  return fcntl(fd, F_SETLK, &l) == 0;
}

}  // namespace

int hardware_cores() noexcept { return get().cores; }

int allowed_cores() noexcept {
  const topo& tp = get();
  return tp.allowed.empty() ? tp.cores : static_cast<int>(tp.allowed.size());
}

core_claim::core_claim(int count, int spread, int places) : spread_(spread) {
  const topo& tp = get();
  if (tp.t == nullptr || count < 1 || spread < 0 || tp.allowed.empty()) return;
  fd_ = open_claim_file();
  if (fd_ < 0) return;
  const std::size_t n = tp.allowed.size();
  for (std::size_t k = 0; k < static_cast<std::size_t>(count) && k < n; ++k)
    try_claim(tp.allowed[(static_cast<std::size_t>(spread) + k) % n]);
  for (std::size_t k = static_cast<std::size_t>(std::max(places, 0)); k < n && size() < count; ++k)
    try_claim(tp.allowed[k]);
}

void core_claim::try_claim(int core) noexcept {
  for (int mine : cores_)
    if (mine == core) return;
  if (lock_byte(fd_, core, F_WRLCK)) cores_.push_back(core);
}

core_claim::~core_claim() { release(); }

core_claim::core_claim(core_claim&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), spread_(o.spread_), cores_(std::move(o.cores_)) {
  o.cores_.clear();
}

core_claim& core_claim::operator=(core_claim&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = std::exchange(o.fd_, -1);
    spread_ = o.spread_;
    cores_ = std::move(o.cores_);
    o.cores_.clear();
  }
  return *this;
}

void core_claim::release() noexcept {
  cores_.clear();
  if (fd_ >= 0) close(std::exchange(fd_, -1));  // drops every lock this process holds on the file
}

bool core_claim::pin_this_thread(int i) const noexcept {
  const topo& tp = get();
  if (tp.t == nullptr || tp.allowed.empty() || i < 0) return false;
  const int n = static_cast<int>(tp.allowed.size());
  const int index = i < size() ? cores_[static_cast<std::size_t>(i)]
                               : tp.allowed[static_cast<std::size_t>((spread_ + i - size()) % n)];
  std::lock_guard lock(bind_mutex);
  hwloc_obj_t core = hwloc_get_obj_by_type(tp.t, HWLOC_OBJ_CORE, static_cast<unsigned>(index));
  if (core == nullptr) return false;
  hwloc_cpuset_t set = hwloc_bitmap_alloc();
  hwloc_bitmap_and(set, core->cpuset, tp.start_mask);
  hwloc_bitmap_singlify(set);  // one PU, so the OS never moves the thread
  const int rc = hwloc_set_cpubind(tp.t, set, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(set);
  return rc == 0;
}

}  // namespace weft::detail
