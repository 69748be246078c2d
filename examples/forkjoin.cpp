// Fork-join across ranks (Itoyori's model): every rank calls root_exec, rank
// 0 runs the root task, and idle ranks steal its forked tasks.
//
//   build/release/examples/example_forkjoin --weft:ranks=4 --weft:threads=1
//   mpiexec -n 4 build/release/examples/example_forkjoin
#include <cstdint>
#include <cstdio>
#include <functional>

#include "weft/forkjoin.hpp"
#include "weft/weft.hpp"

// Nested fork-join: either half may run on another rank.
long fib(int n) {
  if (n < 2) return n;
  auto [a, b] = weft::parallel_invoke([n] { return fib(n - 1); }, [n] { return fib(n - 2); });
  return a + b;
}

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const long f = weft::root_exec(fib, 27);  // the same result on every rank

    // Global memory: data on the last rank, sorted by tasks on all ranks,
    // which reach it through checkouts (tasks capture global spans, never
    // addresses of local variables).
    constexpr std::size_t n = 200000;
    const int last = weft::nranks() - 1;
    const weft::global_span<std::uint32_t> data{weft::allocate_symmetric<std::uint32_t>(n).on(last), n};
    const weft::global_span<std::uint32_t> scratch{weft::allocate_symmetric<std::uint32_t>(n).on(0), n};
    const weft::fork_policy policy{.cutoff = 4096, .checkout_count = 4096};
    const long out_of_order = weft::root_exec([=] {
      weft::parallel_for_each(policy, data, [](std::uint32_t& x) { x = static_cast<std::uint32_t>(x * 2654435761u); });
      weft::parallel_sort(policy, data, scratch);
      return weft::transform_reduce(policy, std::size_t{1}, n, 0L, std::plus<>(), [data](std::size_t i) {
        auto pair = weft::make_checkout(data.data + static_cast<std::ptrdiff_t>(i - 1), 2, weft::checkout_mode::read);
        return pair[0] > pair[1] ? 1L : 0L;
      });
    });

    const weft::steal_statistics s = weft::steal_stats();
    const auto stolen = weft::allreduce(s.stolen(), std::plus<>());
    if (weft::rank() == 0)
      std::printf("fib(27) = %ld; %zu keys sorted on %d ranks: %s; tasks stolen between ranks: %s\n", f, n,
                  weft::nranks(), out_of_order == 0 ? "yes" : "no",
                  weft::nranks() == 1 || stolen > 0 ? "yes" : "none");
  });
}
