// A 2-rank program with a known number of tasks and remote calls, run with
// --weft:trace by run_and_check.sh; check_trace.py then checks the file.
// Every rank runs `tasks` local tasks and makes `calls` remote calls to the
// next rank, each answered by a reply.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "weft/weft.hpp"

namespace {

constexpr int tasks = 200;
constexpr int calls = 50;

// A named function: the trace names the remote-call intervals after it.
long traced_remote_square(long x) { return x * x; }

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const int me = weft::rank(), n = weft::nranks();
    std::vector<weft::future<long>> local;
    for (int i = 0; i < tasks; ++i) local.push_back(weft::async([i] { return long{i}; }));
    long sum = 0;
    for (auto& f : local) sum += f.get();
    if (sum != long{tasks} * (tasks - 1) / 2) {
      std::fprintf(stderr, "rank %d: wrong local sum %ld\n", me, sum);
      std::exit(1);
    }
    long remote = 0;
    for (int i = 0; i < calls; ++i) remote += weft::async_at((me + 1) % n, traced_remote_square, long{i}).get();
    if (remote != long{calls - 1} * calls * (2 * calls - 1) / 6) {
      std::fprintf(stderr, "rank %d: wrong remote sum %ld\n", me, remote);
      std::exit(1);
    }
    weft::barrier();
    std::printf("rank %d: %d tasks and %d remote calls done\n", me, tasks, calls);
    return 0;
  });
}
