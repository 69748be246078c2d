// A distributed weft program: remote calls and collectives. It runs
// unchanged on both backends:
//
//   ./example_distributed --weft:ranks=4        # 4 ranks in this process (smp)
//   mpiexec -n 4 ./example_distributed          # 4 processes (mpi)
//
// Every rank owns a slice of a global array; rank 0 asks each rank for a
// partial sum with async_at, every rank posts a greeting to its right
// neighbour, and the ranks agree on a global result with allreduce.
#include <atomic>
#include <cstdio>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "weft/weft.hpp"

namespace {

constexpr long n_per_rank = 1000;

// Runs on the rank it is called on: the sum of that rank's slice, squared.
double partial_sum_of_squares(long scale) {
  const long first = weft::rank() * n_per_rank;
  double s = 0;
  for (long i = first; i < first + n_per_rank; ++i) s += double(i) * double(i) * double(scale);
  return s;
}

std::atomic<int> greetings{0};

void greet(std::string from) {
  greetings.fetch_add(1);
  std::printf("rank %d: got \"%s\"\n", weft::rank(), from.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const int me = weft::rank(), n = weft::nranks();

    // 1. Remote calls: rank 0 gathers partial sums from every rank (itself too).
    if (me == 0) {
      std::vector<weft::future<double>> parts;
      for (int r = 0; r < n; ++r) parts.push_back(weft::async_at(r, partial_sum_of_squares, 1L));
      double total = 0;
      for (auto& f : parts) total += f.get();
      std::printf("rank 0: sum of squares over %d ranks by remote calls = %.0f\n", n, total);
    }

    // 2. Fire-and-forget: a greeting to the right neighbour (a plain function
    //    or a captureless lambda; arguments are serialized).
    weft::post_at((me + 1) % n, greet, "hello from rank " + std::to_string(me));

    // 3. Collectives: the same sum with allreduce; a broadcast; a gather.
    const double mine = partial_sum_of_squares(1);
    const double total = weft::allreduce(mine, std::plus<>{});
    const long config = weft::broadcast(me == 0 ? 42L : 0L, 0);
    std::vector<int> ranks = weft::allgather(me);
    weft::barrier();  // every greeting was posted before the barrier...
    while (greetings.load() == 0) weft::this_task::yield();  // ...and arrives soon after
    if (me == 0)
      std::printf("allreduce = %.0f, broadcast = %ld, allgather = %zu ranks, ranks agree: %s\n", total, config,
                  ranks.size(), ranks.size() == std::size_t(n) ? "yes" : "no");
  });
}
