// Cannon's matrix multiply on weft's global memory: every rank owns two A
// tiles and two B tiles in one symmetric block (the same offsets on every
// rank), so "my spare A tile" and "my left neighbour's spare A tile" differ
// only in the rank. The initial skew and every step's shift put the
// current tiles into the neighbours' spare tiles; a barrier then says that
// every tile has arrived and every rank is done with the tiles the next
// puts overwrite. Weak scaling: -n is the tile size per rank.
//
//   cannon_weft --weft:ranks=P --weft:threads=1 [-n 512] [-reps 3] [-check]   (smp backend, one process)
//   mpiexec -n P cannon_weft [-n 512] [-reps 3] [-check]                        (mpi backend)
//   cannon_weft -serial [-n 512] [-q 1]      serial reference (triple loop)
//
// Same options, output and checks as cannon_mpi (cannon_frame.hpp).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "../common/app_frame.hpp"
#include "cannon_frame.hpp"
#include "cannon_kernels.hpp"
#include "weft/weft.hpp"

namespace {

/// Puts the current tiles into the left and upper neighbours' spare tiles
/// (the same offsets in their blocks as this rank's spare tiles).
class weft_shift final : public cannon::tile_shift {
 public:
  weft_shift(int left, int up, std::size_t count) : left_(left), up_(up), count_(count) {}
  void begin(const double* a, double* a_next, const double* b, double* b_next) override {
    puts_ = weft::transfer_batch{}
                .put(weft::global_ptr<double>::from_local(a_next).on(left_), std::span<const double>(a, count_))
                .put(weft::global_ptr<double>::from_local(b_next).on(up_), std::span<const double>(b, count_))
                .submit();
  }
  // The barrier: this rank's tiles arrived (the puts completed) on every
  // rank, and every rank finished the product that read the tiles the next
  // step's puts overwrite.
  void end() override {
    puts_.get();
    weft::barrier();
  }

 private:
  int left_, up_;
  std::size_t count_;
  weft::future<void> puts_;
};

int run_weft(const cannon::options& o) {
  const int me = weft::rank(), nranks = weft::nranks();
  const long q = cannon::grid_side(nranks), n = o.n, N = q * n;
  const int r = static_cast<int>(me / q), c = static_cast<int>(me % q);
  auto at = [q](long row, long col) { return static_cast<int>(((row + q) % q) * q + (col + q) % q); };
  const auto count = static_cast<std::size_t>(n * n);

  // Tiles a0, a1, b0, b1 of this rank, in that order.
  const weft::global_ptr<double> tiles = weft::allocate_symmetric<double>(4 * count);
  double* const mine = tiles.local();
  double* const a[2] = {mine, mine + count};
  double* const b[2] = {mine + 2 * count, mine + 3 * count};
  // The skew leaves the tiles in the spare buffers: the steps start there.
  double* const a_skewed[2] = {a[1], a[0]};
  double* const b_skewed[2] = {b[1], b[0]};
  std::vector<double> cm(count);
  weft_shift shift(at(r, c - 1), at(r - 1, c), count);
  const auto max = [](double x, double y) { return std::max(x, y); };

  std::vector<double> times;
  for (long rep = 0; rep < o.reps; ++rep) {
    cannon::fill_a_tile(a[0], n, r * n, c * n, N);
    cannon::fill_b_tile(b[0], n, r * n, c * n, N);
    std::fill(cm.begin(), cm.end(), 0.0);
    weft::barrier();
    const auto t0 = std::chrono::steady_clock::now();
    // Skew: rank (r, c) ends up with A(r, c + r) and B(r + c, c).
    weft::transfer_batch{}
        .put(tiles.on(at(r, c - r)) + static_cast<std::ptrdiff_t>(count), std::span<const double>(a[0], count))
        .put(tiles.on(at(r - c, c)) + static_cast<std::ptrdiff_t>(3 * count), std::span<const double>(b[0], count))
        .submit()
        .get();
    weft::barrier();
    cannon::run_steps(q, n, a_skewed, b_skewed, cm.data(), shift);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    times.push_back(weft::reduce(elapsed, max));
  }

  const double sum = weft::reduce(cannon::tile_checksum(cm.data(), n, r * n, c * n), std::plus<>{});
  const double worst = o.check ? weft::reduce(cannon::max_relative_error(cm.data(), n, r * n, c * n, N), max) : 0;
  weft::free_symmetric(tiles);
  const int rc = me == 0 ? cannon::report("weft", nranks, o, times, worst, sum) : 0;
  return weft::broadcast(rc, 0);
}

}  // namespace

int main(int argc, char** argv) {
  // One BLAS thread per rank: ranks are the parallelism being measured.
  openblas_set_num_threads(1);
  return weft::run(argc, argv, [](int ac, char** av) {
    cannon::options o;
    const std::string error = cannon::parse_options(ac, av, weft::nranks(), o);
    if (!error.empty())
      return apps::refuse(weft::rank(), "cannon_weft", error,
                          "usage: cannon_weft --weft:ranks=P [-n tile] [-reps R] [-check]  (P = q*q; smp backend)\n"
                          "       mpiexec -n P cannon_weft [-n tile] [-reps R] [-check]  (mpi backend)\n"
                          "       cannon_weft -serial [-n tile] [-q grid side]\n");
    return o.serial ? cannon::run_serial(o) : run_weft(o);
  });
}
