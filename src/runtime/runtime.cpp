// The process-wide runtime: parses options, creates this process's ranks
// (several for smp, one for mpi), starts and stops them.
#include "weft/runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/failure_report.hpp"
#include "runtime/layer_hooks.hpp"
#include "runtime/malloc_tuning.hpp"
#include "runtime/options.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/trace_session.hpp"
#include "rma/rank_state.hpp"
#include "sched/fence.hpp"
#include "sched/scheduler.hpp"
#include "sched/topology.hpp"
#include "weft/detail/future_state.hpp"

namespace weft {
namespace detail {

namespace {
std::unique_ptr<process_runtime> g_runtime;
std::mutex g_init_mutex;

[[noreturn]] void default_fatal(const char* message) noexcept {
  std::fflush(stdout);
  std::fprintf(stderr, "weft: rank %d: %s\n", weft::rank(), message);
  std::fflush(stderr);
  std::fflush(stdout);
  write_trace_after_failure();
  if (g_runtime && g_runtime->abort_job) g_runtime->abort_job(1);
  std::_Exit(1);
}
}  // namespace

process_runtime* runtime_state() noexcept { return g_runtime.get(); }

}  // namespace detail

void init(int& argc, char** argv) {
  using namespace detail;
  std::lock_guard lock(g_init_mutex);
  if (g_runtime) {
    std::fprintf(stderr, "weft: init called twice (finalize first)\n");
    std::exit(2);
  }
  bool help = false;
  runtime_options opts;
  try {
    opts = parse_options(argc, argv, help);
  } catch (const option_error& e) {
    std::fprintf(stderr, "weft: %s\n%s", e.what(), options_help().c_str());
    std::exit(2);
  }
  if (help) {
    std::fputs(options_help().c_str(), stdout);
    std::exit(0);
  }
  if (opts.malloc_tuning) tune_malloc();
  // Hand the lower layers their options (options.hpp says why this way).
  allow_asymmetric_fences(opts.asymmetric_fences);
  rma::detail::set_rma_settings({opts.rma_chunk});
  auto rt = std::make_unique<process_runtime>();
  rt->opts = opts;
  fatal_handler = &default_fatal;
  start_backend(*rt);  // chooses the backend, sets world size and local ranks
  g_runtime = std::move(rt);
  install_failure_handlers();  // after the backend: replaces MPI's (UCX's) crash handlers
  home_scheduler() = g_runtime->local[0].get();
  start_layers(*g_runtime);  // e.g. every rank's pgas heap exists before any task runs
  start_trace(*g_runtime);
  for (auto& s : g_runtime->local) s->start();
  sync_trace_clocks(*g_runtime);
}

void finalize() {
  using namespace detail;
  std::lock_guard lock(g_init_mutex);
  if (!g_runtime) return;
  if (on_worker()) {
    std::fprintf(stderr, "weft: finalize called from inside a task; call it from main\n");
    std::abort();
  }
  stop_backend(*g_runtime);  // global quiescence, then workers stop
  stop_layers(*g_runtime);   // nothing reaches their state any more
  finish_trace(*g_runtime);
  home_scheduler() = nullptr;
  g_runtime.reset();
}

bool is_initialized() noexcept { return detail::g_runtime != nullptr; }

int rank() noexcept {
  if (detail::worker* w = detail::current_worker()) return w->sched->rank();
  if (detail::scheduler* s = detail::home_scheduler()) return s->rank();
  return 0;
}

int nranks() noexcept { return detail::g_runtime ? detail::g_runtime->world_size : 1; }

int num_threads() noexcept {
  if (detail::worker* w = detail::current_worker()) return w->sched->num_workers();
  if (detail::scheduler* s = detail::home_scheduler()) return s->num_workers();
  return 0;
}

int thread_index() noexcept {
  detail::worker* w = detail::current_worker();
  return w ? w->index : -1;
}

const char* backend_name() noexcept { return detail::g_runtime ? detail::g_runtime->backend.c_str() : "none"; }

namespace detail {

int run_spmd(int& argc, char** argv, std::function<int(int, char**)> body) {
  init(argc, argv);
  struct root final : task_base {
    std::function<int(int, char**)>* body;
    int argc;
    char** argv;
    int result = 0;
    event done;
    static void go(task_base* t) noexcept {
      auto* self = static_cast<root*>(t);
      try {
        self->result = (*self->body)(self->argc, self->argv);
      } catch (...) {
        fatal_uncaught("the main task");
      }
      self->done.set();
    }
  };
  process_runtime& rt = *runtime_state();
  std::vector<std::unique_ptr<root>> roots;
  for (auto& s : rt.local) {
    auto r = std::make_unique<root>();
    r->run = &root::go;
    r->body = &body;
    r->argc = argc;
    r->argv = argv;
    s->inject(r.get());
    roots.push_back(std::move(r));
  }
  int status = 0;
  for (auto& r : roots) {
    wait_for(r->done, nullptr);
    if (status == 0) status = r->result;
  }
  finalize();
  return status;
}

}  // namespace detail
}  // namespace weft
