// Internal: who drives a rank's communication (--weft:progress) and the
// dedicated progress thread's loop.
#pragma once
#include <atomic>
#include <string>

namespace weft::detail {

class am_transport;

/// Who drives one rank's transport.
struct progress_drive {
  /// Idle workers poll, busy ones every 64th scheduling decision, and a
  /// task's messages leave when it ends or waits (the publish hook).
  bool workers = true;
  /// A dedicated thread polls as well: the only driver with
  /// --weft:progress=thread; under auto a backstop for ranks whose workers
  /// are all busy in long tasks, napping while it finds nothing.
  bool thread = false;
};

/// What the rank's paths to other ranks ask of the target: whether some
/// rank of the job is on another node (same_node false), and whether the
/// transport's one-sided operations complete with no action of the target's
/// CPU (one_sided() non-null and target_passive()).
struct remote_paths {
  bool other_nodes = false;
  bool passive_one_sided = false;
};

/// The drive for `option` (auto, thread, worker). auto starts a thread
/// exactly when a path between nodes needs the target's CPU: some rank is
/// on another node and the transport has no passive one-sided operations
/// (then puts, gets, atomics, locks and steals to a rank of another node
/// travel as messages its progress must answer, and a rank whose workers
/// all run long tasks would answer none until one ends). Otherwise workers
/// alone.
progress_drive choose_progress_drive(const std::string& option, const remote_paths& paths);

/// The paths of the rank that `t` serves.
remote_paths remote_paths_of(am_transport& t);

/// How long the progress thread naps when it finds nothing: from min_ns,
/// doubling per empty poll up to max_ns; any delivery brings it back to
/// min_ns.
struct progress_naps {
  long min_ns = 20'000;
  long max_ns = 20'000;
  /// Polls (busy, then yielding) before the first nap after a delivery:
  /// 0 for the backstop, which leaves the hot polling to the workers.
  int spin_polls = 2000;
  int yield_polls = 100;
};

/// The naps of a progress thread next to workers whose idle nap is
/// `worker_nap_ns` (longer the more workers share a core): the sole driver
/// (thread) spins, yields, then naps 20 µs, longer in proportion when
/// workers outnumber cores; the backstop (auto) never spins and naps up to
/// the workers' idle nap.
progress_naps naps_for(const progress_drive& d, long worker_nap_ns);

/// Drives `t` until `stop`; acts as the transport's rank (weft::rank(),
/// fatal messages).
void progress_loop(am_transport* t, const std::atomic<bool>* stop, progress_naps naps);

}  // namespace weft::detail
