// Backend choice, start-up and the global-quiescence shutdown.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>

#include "am/smp/smp_transport.hpp"
#if WEFT_HAVE_MPI
#include "am/mpi/mpi_transport.hpp"
#endif
#if WEFT_HAVE_UCX
#include "am/ucx/ucx_transport.hpp"
#endif
#include "runtime/launcher.hpp"
#include "runtime/progress_drive.hpp"
#include "runtime/runtime_state.hpp"
#include "sched/fence.hpp"
#include "sched/topology.hpp"

namespace weft::detail {

namespace {

/// Workers more than this many times the cores: a warning on stderr (the
/// job runs, but every worker waits for a core most of the time).
constexpr int oversubscription_warning = 4;
/// When workers outnumber cores, an idle worker's spinning and yielding
/// keep the worker it waits for off the core, and every idle worker waking
/// from its nap to poll takes a core for a moment: with hundreds of them,
/// naps alone filled both cores of a 2-core machine. So idle workers nap
/// longer the more workers share a core, a worker whose nap ran out unwoken
/// goes back to sleep after one look (scheduler::idle_wait), and after
/// activity idle workers spin and yield less the more workers share a
/// core: a little oversubscribed (a rank or two more than cores) long
/// enough to catch a reply on its way, since sleeping costs a futex wake-up
/// per message, several times a round trip; with many workers per core a
/// few rounds only. A message whose wake-up was missed waits up to the nap;
/// on the mpi backend a sender on the same node wakes a sleeping receiver
/// (sched/sleep_slot.hpp), the smp backend's senders wake it directly.
constexpr int oversubscribed_spin_rounds = 2000;  // times cores / workers
constexpr int oversubscribed_yield_rounds = 40;   // times cores / workers
constexpr int min_spin_rounds = 64;
constexpr int min_yield_rounds = 2;
constexpr long max_idle_nap_ns = 20'000'000;

/// Fits the idle policy to the workers sharing cores: those of this node
/// on its cores, and those of this process on the cores of its affinity
/// mask (whichever is more crowded); warns once when they outnumber the
/// cores several-fold.
void fit_to_cores(sched_options& so, int workers_on_node, int workers_here, const char* what) {
  int cores = hardware_cores(), workers = workers_on_node;
  if (workers_here * cores > workers_on_node * allowed_cores()) {
    cores = allowed_cores();
    workers = workers_here;
  }
  if (workers <= cores) return;
  so.spin_rounds = std::min(so.spin_rounds, std::max(min_spin_rounds, oversubscribed_spin_rounds * cores / workers));
  so.yield_rounds =
      std::min(so.yield_rounds, std::max(min_yield_rounds, oversubscribed_yield_rounds * cores / workers));
  so.idle_nap_ns = std::min(max_idle_nap_ns, so.idle_nap_ns * workers / cores);
  // The asymmetric fence pair makes sleeping expensive (a membarrier, an
  // interrupt on every core running the process) to make sending cheap;
  // with more workers than cores they sleep all the time, and those
  // interrupts become a visible share of the run.
  allow_asymmetric_fences(false);
  static bool warned = false;
  if (workers > oversubscription_warning * cores && !std::exchange(warned, true))
    std::fprintf(stderr,
                 "weft: warning: %s make %d workers on %d cores (more than %dx): each waits for a core most "
                 "of the time; use fewer ranks or threads (--weft:threads)\n",
                 what, workers, cores, oversubscription_warning);
}

/// The cores this process's workers are pinned to (see core_claim), held
/// from start_backend to stop_backend.
core_claim claimed_cores;

/// Claims a core of the process's mask for each of its `workers` where
/// free ones remain (with --weft:pin=1); the workers beyond those are pinned
/// round-robin over the mask, sharing cores, after a warning (once per
/// process) naming the ranks. `spread`, `places`: this process's place in
/// its mask and where the places of the job's processes on the node end
/// (see core_claim). Shared cores beat unpinned workers: with the
/// OS moving them, a remote call between two ranks of a 2-core machine
/// running 4 ranks took ~10x longer (docs/CLUSTER.md).
const core_claim* claim_cores(const runtime_options& o, int workers, int spread, int places, int first_rank,
                             int ranks_here) {
  if (!o.pin) return nullptr;
  claimed_cores = core_claim(workers, spread, places);
  static bool warned = false;
  if (claimed_cores.size() < workers && !std::exchange(warned, true)) {
    char ranks[48];
    if (ranks_here == 1) std::snprintf(ranks, sizeof ranks, "rank %d", first_rank);
    else std::snprintf(ranks, sizeof ranks, "ranks %d-%d", first_rank, first_rank + ranks_here - 1);
    std::fprintf(stderr,
                 "weft: %s: %d workers, %d free cores in this process's affinity mask of %d (a core holding "
                 "workers of another weft process on this host is not free): %d workers pinned round-robin over "
                 "the mask, sharing cores (--weft:pin=0 pins none)\n",
                 ranks, workers, claimed_cores.size(), allowed_cores(), workers - claimed_cores.size());
  }
  return &claimed_cores;
}

void make_schedulers(process_runtime& rt, int ranks_here, int threads_per_rank, int first_rank) {
  char what[96];
  std::snprintf(what, sizeof what, "%d ranks x %d threads", ranks_here, threads_per_rank);
  const core_claim* cores = claim_cores(rt.opts, ranks_here * threads_per_rank, 0, ranks_here * threads_per_rank,
                                           first_rank, ranks_here);
  for (int i = 0; i < ranks_here; ++i) {
    sched_options so;
    fit_to_cores(so, ranks_here * threads_per_rank, ranks_here * threads_per_rank, what);
    so.threads = threads_per_rank;
    so.cores = cores;
    so.first_core = i * threads_per_rank;
    so.stack_size = rt.opts.stack_size;
    rt.local.push_back(std::make_unique<scheduler>(first_rank + i, so));
  }
}

/// Connects rank context i to its scheduler and transport, and starts the
/// drive --weft:progress chooses for it (progress_drive.hpp): workers
/// polling (idle ones, and busy ones every 64th scheduling decision), a
/// dedicated thread, or both.
void wire_rank(process_runtime& rt, int i, const progress_drive& drive) {
  scheduler* s = rt.local[static_cast<std::size_t>(i)].get();
  rank_comm* c = rt.comms[static_cast<std::size_t>(i)].get();
  am_transport* t = rt.transports[static_cast<std::size_t>(i)].get();
  c->transport = t;
  t->owner = s;
  s->comm = c;
  if (drive.workers) s->idle_poll = [t] { return t->progress(); };
  if (drive.thread)
    rt.progress_threads.emplace_back(progress_loop, t, &rt.stop_progress,
                                     naps_for(drive, s->options().idle_nap_ns));
}

void start_smp(process_runtime& rt) {
  const runtime_options& o = rt.opts;
  rt.world_size = o.ranks;
  const int cores = allowed_cores();  // the ranks share this process's mask
  const int threads = o.threads > 0 ? o.threads : std::max(1, cores / o.ranks);
  make_schedulers(rt, o.ranks, threads, 0);
  auto world = std::make_shared<smp_world>(o.ranks, threads, o.node_size);
  for (int r = 0; r < o.ranks; ++r) {
    rt.comms.push_back(std::make_unique<rank_comm>(r, o.ranks, rt.local[static_cast<std::size_t>(r)].get()));
    rt.transports.push_back(world->make_transport(r));
    world->attach(r, rt.local[static_cast<std::size_t>(r)].get(), &am_dispatch, rt.comms.back().get());
    rt.transports.back()->attach_publisher(*rt.local[static_cast<std::size_t>(r)]);
    wire_rank(rt, r, choose_progress_drive(o.progress, remote_paths_of(*rt.transports.back())));
  }
  rt.backend_state = world;
}

/// Every rank idle and every message sent anywhere handled, agreed by all
/// processes (the decision uses only job-wide sums, so all stop on the same
/// round), twice in a row with the same job-wide count and nothing moving.
void wait_world_quiescent(process_runtime& rt) {
  am_transport& job = *rt.transports[0];
  std::uint64_t last_sent = ~std::uint64_t{0};
  int stable = 0;
  while (stable < 2) {
    for (auto& s : rt.local) s->wait_quiescent();
    bool moved = false;
    for (auto& t : rt.transports) moved |= t->progress();
    std::uint64_t handled = 0, sent = 0;
    for (auto& c : rt.comms) handled += c->handled();
    for (auto& c : rt.comms) sent += c->sent();
    bool busy = moved;
    for (auto& s : rt.local) busy = busy || !s->quiescent();
    const auto g = job.global_sum({sent, handled, busy ? 1u : 0u});
    if (g[0] == g[1] && g[2] == 0 && g[0] == last_sent)
      ++stable;
    else
      stable = 0;
    last_sent = g[0];
  }
}

#if WEFT_HAVE_MPI
/// The process's one rank on a backend with one rank per process (mpi,
/// ucx), whose transport `t` is made: its scheduler, rank context and
/// progress.
template <class Transport>
void start_one_rank_per_process(process_runtime& rt, std::unique_ptr<Transport> t) {
  rt.world_size = t->size();
  rt.first_rank = t->rank();
  // By default the node's cores are shared among its ranks, within what
  // this process may use (a launcher's binding: its cores). The host's
  // ranks, not --weft:node-size's groups: that option changes paths, not
  // where workers run.
  const int threads = rt.opts.threads > 0
                          ? rt.opts.threads
                          : std::max(1, std::min(allowed_cores(), hardware_cores() / std::max(1, t->host_size())));
  sched_options so;
  so.threads = threads;
  // A core of this process's mask per worker, claimed so that no other
  // process of the node pins there: the node-local rank MPI reports cannot
  // tell the node's processes apart in every launch (MPIR_CVAR_NOLOCAL=1
  // makes every process alone on its node), and launchers hand processes
  // masks of their own (mpiexec -bind-to, srun --cpu-bind, taskset).
  so.cores = claim_cores(rt.opts, threads, t->host_rank() * threads, t->host_size() * threads, t->rank(), 1);
  so.poll_replaces_pause = true;  // a progress call into MPI or UCX is a pause of its own (see sched_options)
  so.stack_size = rt.opts.stack_size;
  char what[96];
  std::snprintf(what, sizeof what, "%d ranks on this node x %d threads", t->host_size(), threads);
  fit_to_cores(so, t->host_size() * threads, threads, what);
  rt.local.push_back(std::make_unique<scheduler>(t->rank(), so));
  rt.comms.push_back(std::make_unique<rank_comm>(t->rank(), t->size(), rt.local[0].get()));
  t->set_context(rt.comms[0].get());
  if (const am_transport::abort_fn abort = t->job_abort()) rt.abort_job = abort;
  const progress_drive drive = choose_progress_drive(rt.opts.progress, remote_paths_of(*t));
  // Worker-driven progress: a task's messages leave as soon as it ends or
  // waits, not at the worker's next poll (mpi_transport::flush).
  if (drive.workers) {
    t->attach_publisher(*rt.local[0]);
    // Same-node senders wake this rank's sleeping workers (sched/sleep_slot.hpp).
    if (sleep_slot* slot = t->node_sleep_slot()) rt.local[0]->sleep_in(*slot, true);
  }
  rt.transports.push_back(std::move(t));
  wire_rank(rt, 0, drive);
}

/// --weft:ranks is for smp: under a launcher the launcher says how many.
void refuse_ranks_option(const runtime_options& o) {
  if (o.ranks <= 1) return;
  std::fprintf(stderr, "weft: --weft:ranks applies to the smp backend; under mpiexec use mpiexec -n\n");
  std::exit(2);
}

void start_mpi(process_runtime& rt) {
  const runtime_options& o = rt.opts;
  refuse_ranks_option(o);
  start_one_rank_per_process(rt, std::make_unique<mpi_transport>(
                                     &am_dispatch, mpi_transport_settings{.eager_limit = o.eager_threshold,
                                                                          .coalesce_limit = o.coalesce_limit,
                                                                          .node_rings = o.node_rings,
                                                                          .chunk = o.mpi_chunk,
                                                                          .one_sided = o.mpi_rma != "off",
                                                                          .one_sided_passive = o.mpi_rma == "on",
                                                                          .node_size = o.node_size}));
}
#endif

#if WEFT_HAVE_UCX
void start_ucx(process_runtime& rt) {
  const runtime_options& o = rt.opts;
  refuse_ranks_option(o);
  ucx_transport_settings settings;
  settings.eager_limit = o.eager_threshold;
  settings.coalesce_limit = o.coalesce_limit;
  settings.node_size = o.node_size;
  settings.one_sided = o.ucx_rma != "off";
  settings.one_sided_passive = o.ucx_rma == "on";
  start_one_rank_per_process(rt, std::make_unique<ucx_transport>(&am_dispatch, settings));
}
#endif

/// --weft:backend=smp (or no MPI in this build) in a process a launcher
/// started as one of several: each process would run a separate job, which
/// is refused unless asked for.
void refuse_separate_jobs(const runtime_options& o, const launcher_info& launcher, const char* why) {
  if (launcher.size <= 1 || o.smp_per_process) return;
  std::fprintf(stderr,
               "weft: %s, but a launcher started this process as one of %d (%s): each process would run a separate "
               "job. For one smp job run a single process with --weft:ranks=N; for one job across the processes "
               "use the mpi backend (--weft:backend=auto or mpi, in a weft built with MPI); to run separate jobs on "
               "purpose add --weft:smp-per-process=1\n",
               why, launcher.size, launcher.evidence);
  std::exit(2);
}

/// A backend of this build: how it is named (--weft:backend), whether
/// `auto` picks it for a process a launcher started, how it starts and how
/// the runtime waits for the job to go quiet before stopping it. Adding one:
/// a folder under src/am with its am_transport, and a row here.
struct backend {
  const char* name;
  /// `auto` takes the first row available for this launch.
  bool (*available)(const launcher_info& launcher);
  void (*start)(process_runtime& rt);
  void (*quiesce)(process_runtime& rt);
  /// The job is this one process: a launcher starting several would start
  /// separate jobs (refused unless --weft:smp-per-process=1).
  bool one_process;
};

bool always(const launcher_info&) { return true; }
#if WEFT_HAVE_MPI
bool launched_as_several(const launcher_info& launcher) { return launcher.size > 1; }
#endif
#if WEFT_HAVE_UCX
/// Chosen by name only: `auto` keeps to mpi and smp.
bool never_auto(const launcher_info&) { return false; }
#endif

constexpr backend backends[] = {
#if WEFT_HAVE_MPI
    {"mpi", launched_as_several, start_mpi, wait_world_quiescent, false},
#endif
#if WEFT_HAVE_UCX
    {"ucx", never_auto, start_ucx, wait_world_quiescent, false},
#endif
    {"smp", always, start_smp, wait_world_quiescent, true},
};

const backend* backend_named(const std::string& name) {
  for (const backend& b : backends)
    if (name == b.name) return &b;
  return nullptr;
}

const backend& choose_backend(const runtime_options& o) {
  const launcher_info launcher = detect_launcher();
  const backend* chosen = nullptr;
  if (o.backend == "auto") {
    for (const backend& b : backends)
      if (chosen == nullptr && b.available(launcher)) chosen = &b;
  } else {
    chosen = backend_named(o.backend);
    if (chosen == nullptr) {
      const char* missing = o.backend == "mpi"   ? "MPI"
                            : o.backend == "ucx" ? "UCX (configure with -DWEFT_UCX=ON; it needs UCX and MPI)"
                                                 : "it";
      std::fprintf(stderr, "weft: --weft:backend=%s, but this weft was built without %s\n", o.backend.c_str(),
                   missing);
      std::exit(2);
    }
  }
  if (chosen->one_process)
    refuse_separate_jobs(o, launcher,
                         o.backend == "auto" ? "this weft was built without MPI" : "--weft:backend=smp");
  return *chosen;
}

}  // namespace

void start_backend(process_runtime& rt) {
  const backend& b = choose_backend(rt.opts);
  rt.backend = b.name;
  b.start(rt);
}

void stop_backend(process_runtime& rt) {
  if (const backend* b = backend_named(rt.backend)) b->quiesce(rt);
  for (auto& s : rt.local) s->stop();
  claimed_cores = core_claim();  // the workers have ended: other processes may take the cores
  rt.stop_progress.store(true, std::memory_order_release);
  for (auto& th : rt.progress_threads) th.join();
  rt.progress_threads.clear();
  rt.stop_progress.store(false, std::memory_order_relaxed);
  if (rt.shutdown) rt.shutdown();
  rt.transports.clear();
  rt.comms.clear();
}

}  // namespace weft::detail
