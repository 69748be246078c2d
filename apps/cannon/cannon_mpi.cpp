// Cannon's matrix multiply with plain MPI: a q x q periodic process grid
// (MPI_Cart), the initial skew by MPI_Sendrecv_replace, then q steps in
// which each rank multiplies its tiles (dgemm) while the next A tile comes
// from the right and the next B tile from below into spare buffers by
// MPI_Isend/MPI_Irecv. Weak scaling: -n is the tile size per rank, so the
// matrix is N = q * n.
//
//   mpiexec -n P cannon_mpi [-n 512] [-reps 3] [-check]
//   cannon_mpi -serial [-n 512] [-q 1]     serial reference (triple loop) of
//                                          the matrix a q x q run computes
//
// Prints the time (slowest rank) and GFLOP/s per repetition summary and
// `checksum <value>`; -check compares every element of C with its closed
// form and exits 1 when one is off by more than 1e-10 relative.
#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../common/mpi_app.hpp"
#include "cannon_frame.hpp"
#include "cannon_kernels.hpp"

namespace {

/// The neighbours on the periodic grid and the tile-shift requests.
class mpi_shift final : public cannon::tile_shift {
 public:
  mpi_shift(MPI_Comm grid, int count) : grid_(grid), count_(count) {
    // Displacement -1: receive from the right/lower neighbour, send to the
    // left/upper one.
    MPI_Cart_shift(grid, 1, -1, &right_, &left_);
    MPI_Cart_shift(grid, 0, -1, &down_, &up_);
  }
  void begin(const double* a, double* a_next, const double* b, double* b_next) override {
    MPI_Irecv(a_next, count_, MPI_DOUBLE, right_, 0, grid_, &rq_[0]);
    MPI_Irecv(b_next, count_, MPI_DOUBLE, down_, 1, grid_, &rq_[1]);
    MPI_Isend(a, count_, MPI_DOUBLE, left_, 0, grid_, &rq_[2]);
    MPI_Isend(b, count_, MPI_DOUBLE, up_, 1, grid_, &rq_[3]);
  }
  void end() override { MPI_Waitall(4, rq_.data(), MPI_STATUSES_IGNORE); }

 private:
  MPI_Comm grid_;
  int count_;
  int left_ = 0, right_ = 0, up_ = 0, down_ = 0;
  std::array<MPI_Request, 4> rq_{};
};

/// Rank (r, c) trades its A tile for A(r, c + r) and its B tile for
/// B(r + c, c), so that the first step pairs matching tiles.
void skew(MPI_Comm grid, int r, int c, double* a, double* b, int count) {
  int src = 0, dst = 0;
  MPI_Cart_shift(grid, 1, -r, &src, &dst);
  MPI_Sendrecv_replace(a, count, MPI_DOUBLE, dst, 2, src, 2, grid, MPI_STATUS_IGNORE);
  MPI_Cart_shift(grid, 0, -c, &src, &dst);
  MPI_Sendrecv_replace(b, count, MPI_DOUBLE, dst, 3, src, 3, grid, MPI_STATUS_IGNORE);
}

int run_mpi(const cannon::options& o, int me, int nranks) {
  const long q = cannon::grid_side(nranks);
  const std::array<int, 2> dims = {static_cast<int>(q), static_cast<int>(q)};
  const std::array<int, 2> periods = {1, 1};
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims.data(), periods.data(), 0, &grid);
  std::array<int, 2> coords{};
  int grid_rank = 0;
  MPI_Comm_rank(grid, &grid_rank);
  MPI_Cart_coords(grid, grid_rank, 2, coords.data());
  const int r = coords[0], c = coords[1];
  const long n = o.n, N = q * n;
  const int count = static_cast<int>(n * n);

  std::vector<double> a0(static_cast<std::size_t>(count)), a1(a0.size()), b0(a0.size()), b1(a0.size()), cm(a0.size());
  double* const a[2] = {a0.data(), a1.data()};
  double* const b[2] = {b0.data(), b1.data()};
  mpi_shift shift(grid, count);
  std::vector<double> times;
  for (long rep = 0; rep < o.reps; ++rep) {
    cannon::fill_a_tile(a0.data(), n, r * n, c * n, N);
    cannon::fill_b_tile(b0.data(), n, r * n, c * n, N);
    std::fill(cm.begin(), cm.end(), 0.0);
    MPI_Barrier(grid);
    const double t0 = MPI_Wtime();
    skew(grid, r, c, a0.data(), b0.data(), count);
    cannon::run_steps(q, n, a, b, cm.data(), shift);
    double elapsed = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, grid);
    times.push_back(slowest);
  }

  const double local_sum = cannon::tile_checksum(cm.data(), n, r * n, c * n);
  double sum = 0;
  MPI_Reduce(&local_sum, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, grid);
  double worst = 0;
  if (o.check) {
    const double local_worst = cannon::max_relative_error(cm.data(), n, r * n, c * n, N);
    MPI_Reduce(&local_worst, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, grid);
  }
  MPI_Comm_free(&grid);

  const int rc = me == 0 ? cannon::report("mpi", nranks, o, times, worst, sum) : 0;
  return apps::rank0_status(rc);
}

}  // namespace

int main(int argc, char** argv) {
  const apps::mpi_environment mpi(argc, argv);
  // One BLAS thread per rank: ranks are the parallelism being measured.
  openblas_set_num_threads(1);

  cannon::options o;
  std::string error = cannon::parse_options(argc, argv, mpi.size, o);
  if (error.empty() && o.n > 46340) error = "-n " + std::to_string(o.n) + " is too large (at most 46340: n * n is an MPI count)";
  if (!error.empty())
    return apps::refuse(mpi, "cannon_mpi", error,
                        "usage: mpiexec -n P cannon_mpi [-n tile] [-reps R] [-check]  (P = q*q)\n"
                        "       cannon_mpi -serial [-n tile] [-q grid side]\n");
  return o.serial ? cannon::run_serial(o) : run_mpi(o, mpi.rank, mpi.size);
}
