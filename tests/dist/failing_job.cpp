// A program whose rank 1 fails in the way argv[1] names, for the tests that
// check a failing rank ends the whole job (on every backend) with a message
// naming the rank and a non-zero exit, instead of leaving the others hanging:
// an exception, exit(3), quick_exit(3), abort(), a raised SIGSEGV or SIGKILL,
// or a task that recurses past the end of its stack (without end, or a few
// KiB and back before it leaves its worker); or more tasks suspended at once
// than the process may map fiber stacks for.
// Two modes send rank 1 a malformed message through the runtime's internal
// send path (what a foreign or corrupted sender would deliver): the receiver
// must detect it and end the job naming the sender.
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "am/rank_comm.hpp"
#include "suspend_at_once.hpp"
#include "weft/weft.hpp"

namespace {
/// Sends rank 1 a message for handler id `handler` with protocol header `h`
/// and no body.
template <class Header>
void send_malformed(std::uint8_t handler, const Header& h) {
  weft::detail::send_am(weft::detail::current_comm(), 1, static_cast<weft::detail::am_handler>(handler), h);
}
struct three_bytes {
  char bytes[3];
};

/// Recursion without end (`limit` comes from outside, so the compiler can
/// neither bound it nor turn it into a loop): each frame keeps 1 KiB live.
[[gnu::noinline]] int recurse(int depth, int limit) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth);
  if (depth == limit) return frame[0];
  return recurse(depth + 1, limit) + frame[0];
}
/// Recursion that returns once it has gone `bytes` below `top`, writing
/// every byte of its frames (as a large local array being filled does).
[[gnu::noinline]] int recurse_below(const char* top, long bytes) {
  volatile char frame[1024];
  for (auto& c : frame) c = 1;
  if (top - const_cast<const char*>(&frame[0]) > bytes) return frame[0];
  return recurse_below(top, bytes) + frame[0];
}
/// Runs 2 KiB past the end of a `stack_kib` stack and back, then leaves
/// the worker: a guard page or the canary below the stack catches it.
void overrun_stack(long stack_kib) {
  volatile char top = 0;
  std::printf("%d\n", recurse_below(const_cast<const char*>(&top), stack_kib * 1024 + 2048));
  weft::this_task::yield();
}
/// Suspends more tasks at once than the address space it leaves itself
/// (ulimit -v: what it uses now plus 256 MiB) has room for fiber stacks:
/// the job must end naming that limit. Exits 77 where it cannot be set.
void suspend_too_many_tasks() {
  long vm_kib = 0;
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::sscanf(line, "VmSize: %ld kB", &vm_kib) == 1) break;
    std::fclose(f);
  }
  const rlimit as{static_cast<rlim_t>(vm_kib + 256 * 1024) * 1024, static_cast<rlim_t>(vm_kib + 256 * 1024) * 1024};
  if (vm_kib <= 0 || setrlimit(RLIMIT_AS, &as) != 0) {
    std::printf("cannot limit the address space here\n");
    std::fflush(stdout);
    std::_Exit(77);
  }
  const long n = 256 * 1024 / 16 + 1000;  // more than 256 MiB holds even at the smallest stacks
  suspend_at_once(n, [n] { std::printf("%ld tasks suspended at once: the limit was not reached\n", n); });
}
}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "throw_main";
  const int no_limit = argc > 1 ? -1 : 0;  // depths count up from 0: never reached
  return weft::run(argc, argv, [mode, no_limit] {
    if (weft::rank() == 1) {
      if (std::strcmp(mode, "throw_main") == 0) throw std::runtime_error("rank one gives up");
      if (std::strcmp(mode, "abort") == 0) std::abort();
      if (std::strcmp(mode, "kill") == 0) std::raise(SIGKILL);
      if (std::strcmp(mode, "segv") == 0) std::raise(SIGSEGV);
      if (std::strcmp(mode, "exit") == 0) std::exit(3);
      if (std::strcmp(mode, "quick_exit") == 0) std::quick_exit(3);
      if (std::strcmp(mode, "stack_overflow") == 0) std::printf("%d\n", recurse(0, no_limit));
      if (std::strcmp(mode, "stack_overrun_64k") == 0) overrun_stack(64);
    }
    if (weft::rank() == 0) {
      if (std::strcmp(mode, "unknown_handler") == 0) send_malformed(250, std::uint64_t{0});
      // An id small enough for the mpi transport's 3-byte frame prefix,
      // whose handler field is 4 bits wide.
      if (std::strcmp(mode, "unknown_small_handler") == 0) send_malformed(9, std::uint64_t{0});
      if (std::strcmp(mode, "truncated_call") == 0) send_malformed(1, three_bytes{{1, 2, 3}});  // a call's is 8
      if (std::strcmp(mode, "too_many_suspended") == 0) suspend_too_many_tasks();
    }
    if (std::strcmp(mode, "throw_posted") == 0 && weft::rank() == 0)
      weft::post_at(1, [] { throw std::logic_error("posted call failed"); });
    weft::barrier();  // the other ranks would wait here forever for rank 1
    weft::barrier();
  });
}
