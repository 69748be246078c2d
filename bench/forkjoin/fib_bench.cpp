// fib(n) by binary recursion, every call a fork (no cutoff): the cost of a
// fork and join, and how well idle workers/ranks find work.
//
//   bench_fj_fib --serial [--n=35]                        plain recursion
//   bench_fj_fib --weft:ranks=1 --weft:threads=2 [--n=35] 1 rank x 2 threads
//   bench_fj_fib --weft:ranks=2 --weft:threads=1          2 ranks (smp)
//   WEFT_THREADS=1 mpiexec.mpich -n 2 -bind-to core bench_fj_fib   (mpi)
// Options: --reps=R (default 1), --label=NAME, --csv=FILE. Records the time
// (s, rank 0, around root_exec) and checks the value against the closed
// recurrence computed by a loop.
#include <cstdio>
#include <string>

#include "bench_common.hpp"
#include "fork_policy.hpp"

namespace {

using namespace fj_bench;

template <class Forks>
long fib(int n) {
  if (n < 2) return n;
  auto [a, b] = Forks::both([n] { return fib<Forks>(n - 1); }, [n] { return fib<Forks>(n - 2); });
  return a + b;
}

long fib_loop(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    const long c = a + b;
    a = b;
    b = c;
  }
  return a;
}

void run(const options& o) {
  const int n = static_cast<int>(o.number("n", 35));
  const std::string param = "n=" + std::to_string(n);
  const long expected = fib_loop(n);
  for (long rep = 0; rep < o.number("reps", 1); ++rep) {
    long value = 0;
    double seconds = 0;
    if (o.serial()) {
      const auto t0 = now_ns();
      value = fib<serial_forks>(n);
      seconds = 1e-9 * static_cast<double>(now_ns() - t0);
    } else {
      weft::barrier();
      weft::reset_steal_statistics();
      const auto t0 = now_ns();
      value = weft::root_exec(fib<weft_forks>, n);
      seconds = 1e-9 * static_cast<double>(now_ns() - t0);
    }
    if (value != expected) {
      std::fprintf(stderr, "fib(%d) = %ld, expected %ld\n", n, value, expected);
      std::exit(1);
    }
    if (o.serial() || weft::rank() == 0) record(o, "fib", param, "seconds", seconds);
    if (!o.serial()) record_steal_stats(o, "fib", param);
  }
}

}  // namespace

int main(int argc, char** argv) { return bench_main(argc, argv, run); }
