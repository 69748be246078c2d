// Nested fork-join two ways: futures (weft::async + get) and task_group.
// A blocked get() suspends the task's fiber; the worker keeps running others.
//
//   ./example_fib [n] [--weft:threads=N]
#include <cstdio>
#include <cstdlib>

#include <weft/weft.hpp>

long fib_futures(int n) {
  if (n < 20) return n < 2 ? n : fib_futures(n - 1) + fib_futures(n - 2);  // cut-off: serial below 20
  weft::future<long> a = weft::async(fib_futures, n - 1);
  long b = fib_futures(n - 2);
  return a.get() + b;
}

long fib_group(int n) {
  if (n < 20) return n < 2 ? n : fib_group(n - 1) + fib_group(n - 2);
  long a = 0, b = 0;
  weft::task_group g;
  g.run([&] { a = fib_group(n - 1); });
  g.run([&] { b = fib_group(n - 2); });
  g.wait();
  return a + b;
}

int main(int argc, char** argv) {
  return weft::run(argc, argv, [](int ac, char** av) {
    int n = ac > 1 ? std::atoi(av[1]) : 32;
    std::printf("fib(%d) = %ld (futures), %ld (task_group) on %d worker threads\n", n, fib_futures(n), fib_group(n),
                weft::num_threads());
  });
}
