// Who drives a rank's communication, and the progress thread's loop.
#include "runtime/progress_drive.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <sched.h>

#include "am/transport.hpp"
#include "sched/scheduler.hpp"

namespace weft::detail {

progress_drive choose_progress_drive(const std::string& option, const remote_paths& paths) {
  if (option == "thread") return {.workers = false, .thread = true};
  if (option == "worker") return {.workers = true, .thread = false};
  return {.workers = true, .thread = paths.other_nodes && !paths.passive_one_sided};
}

remote_paths remote_paths_of(am_transport& t) {
  remote_paths p;
  const int n = t.shape().size;
  for (int r = 0; r < n && !p.other_nodes; ++r) p.other_nodes = !t.same_node(r);
  const one_sided_ops* os = t.one_sided();
  p.passive_one_sided = os != nullptr && os->target_passive();
  return p;
}

progress_naps naps_for(const progress_drive& d, long worker_nap_ns) {
  // Workers nap sched_options' default when they have a core each, longer
  // in proportion to how many share one (backend_select.cpp, fit_to_cores).
  const long crowding = std::max(1L, worker_nap_ns / sched_options{}.idle_nap_ns);
  progress_naps n;
  if (d.workers) {
    // A backstop: the workers poll hot and are woken by senders; this
    // thread only has to notice, within about a worker's nap, messages that
    // busy workers leave waiting. Spinning or short naps here took cores
    // from the workers when ranks outnumber cores.
    n.min_ns = 50'000;
    n.max_ns = std::max(n.min_ns, worker_nap_ns);
    n.spin_polls = 0;
    n.yield_polls = 0;
  } else {
    // The only driver: hot after traffic, then naps of 20 µs, which stretch
    // when workers share cores so that an idle thread per rank does not
    // keep waking up on cores the workers need.
    n.max_ns = n.min_ns * crowding;
  }
  return n;
}

void progress_loop(am_transport* t, const std::atomic<bool>* stop, progress_naps naps) {
  // This thread acts for the transport's rank: weft::rank() and the rank
  // named in fatal messages are that rank's, not the process's first.
  home_scheduler() = t->owner;
  int idle = 0;
  long nap = naps.min_ns;
  while (!stop->load(std::memory_order_acquire)) {
    if (t->progress()) {
      idle = 0;
      nap = naps.min_ns;
    } else if (++idle <= naps.spin_polls) {
      cpu_relax();
    } else if (idle <= naps.spin_polls + naps.yield_polls) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::nanoseconds(nap));
      nap = std::min(naps.max_ns, nap * 2);
    }
  }
}

}  // namespace weft::detail
