// A program whose rank 1 fails in the way argv[1] names, for the tests that
// check a failing rank ends the whole job (on every backend) with a message
// naming the rank and a non-zero exit, instead of leaving the others hanging:
// an exception, exit(3), quick_exit(3), abort(), a raised SIGSEGV or SIGKILL,
// or a task that recurses past the end of its stack; or more tasks suspended
// at once than the kernel will map fiber stacks for.
// Two modes send rank 1 a malformed message through the runtime's internal
// send path (what a foreign or corrupted sender would deliver): the receiver
// must detect it and end the job naming the sender.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <vector>
#include <stdexcept>

#include "am/rank_comm.hpp"
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
/// Suspends more tasks at once than vm.max_map_count leaves mappings for
/// (two per fiber stack): the job must end naming that limit. Exits 77
/// where the limit is too high to reach in reasonable memory.
void suspend_too_many_tasks() {
  long limit = 0;
  if (std::FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    if (std::fscanf(f, "%ld", &limit) != 1) limit = 0;
    std::fclose(f);
  }
  if (limit <= 0 || limit > 1'000'000) {
    std::printf("vm.max_map_count is %ld here: too many tasks to suspend in a test\n", limit);
    std::fflush(stdout);
    std::_Exit(77);
  }
  weft::promise<void> release;
  weft::shared_future<void> released = release.get_future().share();
  std::atomic<long> waiting{0};
  std::vector<weft::future<void>> tasks;
  const long n = limit / 2 + 1000;
  for (long i = 0; i < n; ++i)
    tasks.push_back(weft::async([&waiting, released] {
      waiting.fetch_add(1);
      released.get();
    }));
  while (waiting.load() < n) weft::this_task::yield();
  std::printf("%ld tasks suspended at once: the limit was not reached\n", n);
  release.set_value();
  for (auto& t : tasks) t.get();
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
