// checkout/checkin: a matrix-vector product y = A x with x spread over the
// ranks and y gathered on rank 0. Each rank checks out every piece of x to
// read (from ranks on other nodes through its software cache, from ranks it
// maps directly as they are), computes its rows of y, and writes them into
// its own slice of rank 0's y with a write checkout — slices of several
// ranks share cache blocks there, and only the bytes each rank checked out
// go back. One cache_barrier() makes the writes visible to rank 0.
//
//   ./example_checkout --weft:ranks=4
//   mpiexec -n 4 ./example_checkout
//   ./example_checkout --weft:ranks=4 --weft:cache=always   (through the cache in one process)
#include <cstdio>
#include <vector>

#include <weft/weft.hpp>

namespace {
constexpr std::size_t n = 1000;
double a(std::size_t i, std::size_t j) { return static_cast<double>((i + 2 * j) % 5); }
double x0(std::size_t j) { return static_cast<double>(j % 7 + 1); }
}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const int me = weft::rank(), ranks = weft::nranks();
    const std::size_t block = (n + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks);
    auto x = weft::allocate_symmetric<double>(block);  // x[j] lives on rank j / block
    auto y = weft::allocate_symmetric<double>(n);      // only rank 0's is used
    const std::size_t first = static_cast<std::size_t>(me) * block;
    const std::size_t rows = first < n ? std::min(block, n - first) : 0;
    for (std::size_t k = 0; k < rows; ++k) x.local()[k] = x0(first + k);
    weft::cache_barrier();

    std::vector<double> mine(rows, 0.0);
    for (int r = 0; r < ranks; ++r) {
      const std::size_t from = static_cast<std::size_t>(r) * block;
      if (from >= n) break;
      auto piece = weft::make_checkout(x.on(r), std::min(block, n - from), weft::checkout_mode::read);
      for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t k = 0; k < piece.size(); ++k) mine[i] += a(first + i, from + k) * piece[k];
    }
    if (rows > 0) {
      auto out = weft::make_checkout(y.on(0) + static_cast<std::ptrdiff_t>(first), rows, weft::checkout_mode::write);
      std::copy(mine.begin(), mine.end(), out.begin());
    }
    weft::cache_barrier();  // release, barrier, acquire: rank 0 sees every slice

    if (me == 0) {
      bool ok = true;
      double sum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        double serial = 0;
        for (std::size_t j = 0; j < n; ++j) serial += a(i, j) * x0(j);
        ok = ok && y.local()[i] == serial;
        sum += y.local()[i];
      }
      std::printf("y = A x, %zu rows over %d ranks by checkouts: sum %.0f, matches serial: %s\n", n, ranks, sum,
                  ok ? "yes" : "no");
    }
    weft::barrier();
    weft::free_symmetric(y);
    weft::free_symmetric(x);
  });
}
