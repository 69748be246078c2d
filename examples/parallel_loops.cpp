// Data-parallel loops: parallel_for and parallel_reduce over an index range.
//
//   ./example_parallel_loops [--weft:threads=N]
#include <cmath>
#include <cstdio>
#include <vector>

#include <weft/weft.hpp>

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const long n = 1 << 22;
    std::vector<double> x(n), y(n);
    weft::parallel_for(0L, n, 4096L, [&](long i) {
      x[i] = 1.0 / double(i + 1);
      y[i] = 2.0;
    });
    double dot = weft::parallel_reduce(
        0L, n, 4096L, 0.0, [&](long i) { return x[i] * y[i]; }, [](double a, double b) { return a + b; });
    // Midpoint rule for pi = integral of 4/(1+t^2) on [0,1].
    const long steps = 10'000'000;
    double pi = weft::parallel_reduce(
                    0L, steps, 100000L, 0.0,
                    [&](long i) {
                      double t = (double(i) + 0.5) / double(steps);
                      return 4.0 / (1.0 + t * t);
                    },
                    [](double a, double b) { return a + b; }) /
                double(steps);
    std::printf("harmonic dot = %.6f, pi ~ %.10f (error %.2e)\n", dot, pi, std::fabs(pi - M_PI));
  });
}
