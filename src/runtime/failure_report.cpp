#include "runtime/failure_report.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <unistd.h>

#include "runtime/runtime_state.hpp"
#include "runtime/trace_session.hpp"
#include "sched/stack_fault.hpp"
#include "weft/runtime.hpp"

namespace weft::detail {

namespace {

struct fatal_signal {
  int number;
  const char* name;
};
constexpr fatal_signal fatal_signals[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"}, {SIGABRT, "SIGABRT"},
};
constexpr int n_fatal = sizeof fatal_signals / sizeof fatal_signals[0];
struct sigaction previous_action[n_fatal];
/// Hand a fatal signal on to the handler that was there before weft's (not
/// to the default action) after the report; see install_failure_handlers.
bool chain_to_previous = false;

bool running() noexcept { return runtime_state() != nullptr; }

/// Ends the job with `code` after a report: on mpi the others are ended too
/// (abort_job), on smp every rank is in this process.
[[noreturn]] void end_job(int code) noexcept {
  write_trace_after_failure();
  if (process_runtime* rt = runtime_state(); rt != nullptr && rt->abort_job) rt->abort_job(code);
  std::_Exit(code);
}

/// exit() from any thread while the runtime runs. Without this, on mpi the
/// rank blocked in MPI_Finalize (registered with atexit when MPI started)
/// while the others waited for it forever; on smp static destructors ran
/// under the other ranks' running workers. Registered after MPI's atexit
/// handler, so it runs before it.
void on_process_exit(int status, void*) noexcept {
  if (!running()) return;  // after finalize: an ordinary exit
  // A status of 0 would let the job look successful though the rank left
  // the others waiting.
  const int code = status != 0 ? status : 1;
  std::fflush(stdout);
  if (status != 0)
    std::fprintf(stderr, "weft: rank %d: exit(%d) called while the runtime was running\n", weft::rank(), status);
  else
    std::fprintf(stderr, "weft: rank %d: exit(0) called while the runtime was running (the job ends with status 1)\n",
                 weft::rank());
  std::fflush(stderr);
  end_job(code);
}

/// quick_exit() passes its status to no handler; it ends the process with
/// that status right after (without MPI_Finalize, so on mpi the launcher
/// ends the other ranks).
void on_quick_exit() noexcept {
  if (!running()) return;
  std::fflush(stdout);
  std::fprintf(stderr, "weft: rank %d: quick_exit called while the runtime was running\n", weft::rank());
  std::fflush(stderr);
}

/// Appends `s` to the line at `at` (async-signal-safe formatting).
char* put(char* at, const char* end, const char* s) noexcept {
  while (*s != '\0' && at < end) *at++ = *s++;
  return at;
}
char* put(char* at, const char* end, int v) noexcept {
  char digits[12];
  int n = 0;
  unsigned u = v < 0 ? 0u - static_cast<unsigned>(v) : static_cast<unsigned>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0 && n < 11);
  if (v < 0 && at < end) *at++ = '-';
  while (n > 0 && at < end) *at++ = digits[--n];
  return at;
}

/// A fatal signal in any thread: one line naming the rank (the signalled
/// thread's, found through its worker), written with write(2) only, then
/// the signal's default action ends the process, and on mpi the launcher
/// (Hydra, Slurm) the job. The handler installed before (UCX's backtrace
/// printer, AddressSanitizer's report) runs next only when asked for.
void on_fatal_signal(int sig, siginfo_t* info, void*) noexcept {
  int k = 0;
  while (k < n_fatal && fatal_signals[k].number != sig) ++k;
  if (k == n_fatal) return;
  if (running()) {
    char line[200];
    char* const end = line + sizeof line - 1;
    char* at = put(line, end, "weft: rank ");
    at = put(at, end, weft::rank());
    // A fault in the guard page below the running task's fiber stack: the
    // task recursed (or allocated on its stack) past the stack's end.
    const bool fault = (sig == SIGSEGV || sig == SIGBUS) && info != nullptr && info->si_code > 0;
    if (const std::size_t stack = fault ? overflowed_fiber_stack(info->si_addr) : 0; stack != 0) {
      at = put(at, end, ": stack overflow in a task (fiber stacks are ");
      at = put(at, end, static_cast<int>(stack / 1024));
      at = put(at, end, " KiB; --weft:stack sets it)\n");
    } else {
      at = put(at, end, ": killed by signal ");
      at = put(at, end, sig);
      at = put(at, end, " (");
      at = put(at, end, fatal_signals[k].name);
      at = put(at, end, ") while the runtime was running\n");
    }
    [[maybe_unused]] const ssize_t w = write(STDERR_FILENO, line, static_cast<std::size_t>(at - line));
  }
  struct sigaction next = previous_action[k];
  if (running() && !chain_to_previous) {
    next = {};
    next.sa_handler = SIG_DFL;
  }
  sigaction(sig, &next, nullptr);
  // Raised again (pending until this handler returns): a signal sent by
  // raise() or abort() would not come back by itself; a fault re-executes
  // its instruction anyway.
  raise(sig);
}

}  // namespace

void install_failure_handlers() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    // UCX, loaded with MPI even by smp-only runs, installs a crash handler
    // when the library loads (UCX_HANDLE_ERRORS is read then, so setting
    // it now has no effect): its backtraces came before weft's report, and
    // it may wait in it. It runs after the report only if the user set
    // UCX_HANDLE_ERRORS; AddressSanitizer's always does, for its report.
#if defined(__SANITIZE_ADDRESS__)
    chain_to_previous = true;
#else
    chain_to_previous = std::getenv("UCX_HANDLE_ERRORS") != nullptr;
#endif
    on_exit(&on_process_exit, nullptr);
    at_quick_exit(&on_quick_exit);
    for (int k = 0; k < n_fatal; ++k) {
      struct sigaction sa {};
      sa.sa_sigaction = &on_fatal_signal;
      sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&sa.sa_mask);
      sigaction(fatal_signals[k].number, &sa, &previous_action[k]);
    }
  });
}

}  // namespace weft::detail
