#include "sched/topology.hpp"

#include <hwloc.h>

#include <mutex>
#include <thread>

namespace weft::detail {

namespace {
struct topo {
  hwloc_topology_t t = nullptr;
  int cores = 1;
  topo() {
    if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0) {
      t = nullptr;
      cores = static_cast<int>(std::thread::hardware_concurrency());
    } else {
      cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
      if (cores <= 0) cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    }
    if (cores <= 0) cores = 1;
  }
  ~topo() {
    if (t) hwloc_topology_destroy(t);
  }
};
topo& get() {
  static topo instance;
  return instance;
}
std::mutex bind_mutex;  // hwloc topology objects are not safe for concurrent use
}  // namespace

int hardware_cores() noexcept { return get().cores; }

bool pin_this_thread(int index) noexcept {
  topo& tp = get();
  if (tp.t == nullptr) return false;
  std::lock_guard lock(bind_mutex);
  hwloc_obj_t core = hwloc_get_obj_by_type(tp.t, HWLOC_OBJ_CORE, static_cast<unsigned>(index % tp.cores));
  if (core == nullptr) core = hwloc_get_obj_by_type(tp.t, HWLOC_OBJ_PU, static_cast<unsigned>(index % tp.cores));
  if (core == nullptr) return false;
  hwloc_cpuset_t set = hwloc_bitmap_dup(core->cpuset);
  hwloc_bitmap_singlify(set);  // one PU, so the OS never moves the thread
  int rc = hwloc_set_cpubind(tp.t, set, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(set);
  return rc == 0;
}

}  // namespace weft::detail
