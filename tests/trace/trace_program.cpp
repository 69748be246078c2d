// A 2-rank program with a known number of tasks and remote calls, run with
// --weft:trace by run_and_check.sh; check_trace.py then checks the file.
// Every rank runs `tasks` local tasks and makes `calls` remote calls to the
// next rank, each answered by a reply; rank 0 runs a fork-join root whose
// forked tasks the trace shows as such, and every rank joins an allgather
// run as a task of its own (a collective interval on every rank), and a
// kernel of each form (a function, a lambda) on a device of the next rank.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "weft/coll.hpp"
#include "weft/forkjoin.hpp"
#include "weft/offload.hpp"
#include "weft/weft.hpp"

namespace {

constexpr int tasks = 200;
constexpr int calls = 50;

// A named function: the trace names the remote-call intervals after it.
long traced_remote_square(long x) { return x * x; }

// A named function kernel: the trace names its target kernel interval after it.
void traced_kernel(std::span<long> out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<long>(i);
}

// Every task spawns its two children and awaits them: a child still queued
// is taken back by its parent and runs as a forked task interval.
long forked_fib(int n) {
  if (n < 2) return n;
  const weft::global_future<long> a = weft::spawn(forked_fib, n - 1);
  const weft::global_future<long> b = weft::spawn(forked_fib, n - 2);
  return b.get() + a.get();
}

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
    if (const long fib = weft::root_exec(forked_fib, 12); fib != 144) {
      std::fprintf(stderr, "rank %d: wrong fib(12) %ld\n", me, fib);
      std::exit(1);
    }
    const weft::device next = weft::devices_of((me + 1) % n).front();  // a cpu device by default
    std::vector<long> out(16);
    weft::target(next, traced_kernel, weft::map_from(std::span(out))).get();
    weft::target(next, [](std::span<long> v) { v[0] += 100; }, weft::map_tofrom(std::span(out))).get();
    if (out[0] != 100 || out[15] != 15) {
      std::fprintf(stderr, "rank %d: wrong kernel output %ld %ld\n", me, out[0], out[15]);
      std::exit(1);
    }
    if (weft::allgather_async(me).get().size() != static_cast<std::size_t>(n)) {
      std::fprintf(stderr, "rank %d: wrong allgather size\n", me);
      std::exit(1);
    }
    weft::barrier();
    std::printf("rank %d: %d tasks and %d remote calls done\n", me, tasks, calls);
    return 0;
  });
}
