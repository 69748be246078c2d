// root_exec called many times in a row with no barrier between the roots:
// a rank still finishing one root while rank 0 has started the next must
// not take (or keep records of) the next root's tasks. The roots alternate
// parallel_invoke, nested spawn/global_future and parallel_for_each over a
// distributed vector, so tasks that spawn are stolen while other ranks are
// still leaving the previous root.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>

#include "spmd_main.hpp"
#include "weft/forkjoin.hpp"

using weft::test::on_every_rank;

namespace {

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

long invoke_fib(int n) {
  if (n < 2) return n;
  auto [a, b] = weft::parallel_invoke([n] { return invoke_fib(n - 1); }, [n] { return invoke_fib(n - 2); });
  return a + b;
}

/// fib through futures: every task spawns its two children, on whichever
/// rank it runs, and awaits them.
long spawn_fib(int n) {
  if (n < 2) return n;
  const weft::global_future<long> a = weft::spawn(spawn_fib, n - 1);
  const weft::global_future<long> b = weft::spawn(spawn_fib, n - 2);
  return b.get() + a.get();
}

/// Roots run by the test; WEFT_TEST_ROOTS overrides (for longer stress runs).
int root_count() {
  if (const char* s = std::getenv("WEFT_TEST_ROOTS")) return std::atoi(s);
  return 100;
}

}  // namespace

TEST(ForkJoinRoots, BackToBackWithoutBarrier) {
  on_every_rank([] {
    constexpr std::size_t n = 512;
    auto v = weft::global_vector<std::int64_t>::distributed(n);
    for (std::int64_t& x : v.local_part()) x = 0;
    weft::cache_barrier();
    const int roots = root_count();
    int wrong = 0, for_each_roots = 0;
    for (int k = 0; k < roots; ++k) {
      switch (k % 3) {
        case 0:
          if (weft::root_exec(invoke_fib, 14) != fib_serial(14)) ++wrong;
          break;
        case 1:
          if (weft::root_exec(spawn_fib, 11) != fib_serial(11)) ++wrong;
          break;
        default:
          weft::root_exec([v] {
            weft::parallel_for_each(weft::fork_policy{.cutoff = 16, .checkout_count = 16}, v,
                                    [](std::int64_t& x) { x += 1; });
          });
          ++for_each_roots;
      }
    }
    EXPECT_EQ(wrong, 0) << "roots with a wrong result on rank " << weft::rank();
    // Every element was incremented once per parallel_for_each root.
    const std::int64_t sum = weft::root_exec([v] {
      return weft::transform_reduce(weft::fork_policy{.cutoff = 64, .checkout_count = 64}, v, std::int64_t{0},
                                    std::plus<>(), [](const std::int64_t& x) { return x; });
    });
    EXPECT_EQ(sum, static_cast<std::int64_t>(n) * for_each_roots);
    weft::barrier();
  });
}
