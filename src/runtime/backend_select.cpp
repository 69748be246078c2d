// Backend choice and start-up. For now every configuration runs the smp
// backend's schedulers; the transports plug in here.
#include <cstdlib>

#include "runtime/runtime_state.hpp"
#include "sched/topology.hpp"

namespace weft::detail {

void start_backend(process_runtime& rt) {
  const runtime_options& o = rt.opts;
  rt.backend = "smp";
  rt.world_size = o.ranks;
  int cores = hardware_cores();
  int threads = o.threads > 0 ? o.threads : (cores / o.ranks > 0 ? cores / o.ranks : 1);
  for (int r = 0; r < o.ranks; ++r) {
    sched_options so;
    so.threads = threads;
    so.pin = o.pin;
    so.first_core = r * threads;
    so.stack_size = o.stack_size;
    rt.local.push_back(std::make_unique<scheduler>(r, so));
  }
}

void stop_backend(process_runtime& rt) {
  for (auto& s : rt.local) s->wait_quiescent();
  for (auto& s : rt.local) s->stop();
  if (rt.shutdown) rt.shutdown();
}

}  // namespace weft::detail
