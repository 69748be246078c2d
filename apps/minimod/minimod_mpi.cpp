// Minimod's acoustic propagator with plain MPI: the grid split into slabs
// of x planes, one per rank; before every step each rank sends its first
// and last 4 planes to its lower and upper neighbours (MPI_Isend/Irecv)
// into their halo planes. Strong scaling: the grid is fixed.
//
//   mpiexec -n P minimod_mpi [-nx 64 -ny 64 -nz 64] [-steps 20] [-check]
//   minimod_mpi -serial [-nx ... -steps ...]     serial reference
//
// Prints the time per step (slowest rank, with its halo-exchange share)
// and `checksum <value>` (sum of u^2 over the final wavefield, summed
// plane by plane in x order, so it does not depend on the split). -check
// gathers the wavefield and compares it with a serial run on rank 0:
// identical bits pass, otherwise a relative difference up to 1e-12
// passes; more exits 1.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "../common/app_options.hpp"
#include "../common/mpi_app.hpp"
#include "minimod_kernels.hpp"

namespace {

constexpr double check_tolerance = 1e-12;

struct options {
  long nx = 64, ny = 64, nz = 64;
  long steps = 20;
  bool check = false;
  bool serial = false;
};

// halo-exchange: begin (apps/count_halo_lines.sh counts the code lines to the end marker)
class mpi_halo final : public minimod::halo_exchange {
 public:
  mpi_halo(const minimod::slab& s, int rank, int nranks)
      : s_(s), lower_(rank > 0 ? rank - 1 : MPI_PROC_NULL), upper_(rank + 1 < nranks ? rank + 1 : MPI_PROC_NULL) {}
  void exchange(double* u) override {
    const int count = static_cast<int>(minimod::radius * s_.plane());
    std::array<MPI_Request, 4> rq{};
    MPI_Irecv(u + s_.plane_offset(-minimod::radius), count, MPI_DOUBLE, lower_, 0, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(u + s_.plane_offset(s_.nx), count, MPI_DOUBLE, upper_, 1, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(u + s_.plane_offset(0), count, MPI_DOUBLE, lower_, 1, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(u + s_.plane_offset(s_.nx - minimod::radius), count, MPI_DOUBLE, upper_, 0, MPI_COMM_WORLD, &rq[3]);
    MPI_Waitall(4, rq.data(), MPI_STATUSES_IGNORE);
  }

 private:
  minimod::slab s_;
  int lower_, upper_;
};
// halo-exchange: end

/// The final wavefield of a run on one process (owned values, x slowest)
/// and its plane sums.
struct serial_run {
  std::vector<double> values, sums;
  double seconds = 0;
};

serial_run run_serial_propagation(const minimod::problem& p) {
  const minimod::slab s = minimod::split(p, 1, 0);
  std::vector<double> u(s.size(), 0.0), u_prev(s.size(), 0.0);
  minimod::no_exchange none;
  const minimod::run_result r = minimod::propagate(p, s, u.data(), u_prev.data(), none);
  return {minimod::owned_values(s, r.field), minimod::plane_sums(s, r.field), r.seconds};
}

double sum_in_order(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

void print_header(const char* what, int nranks, const minimod::problem& p) {
  std::printf("minimod %s: %d rank%s, grid %ld x %ld x %ld (split along x), %ld steps, absorbing layers of %ld points\n",
              what, nranks, nranks == 1 ? "" : "s", p.nx, p.ny, p.nz, p.steps, p.sponge);
}

int run_serial(const minimod::problem& p) {
  const serial_run r = run_serial_propagation(p);
  print_header("serial", 1, p);
  std::printf("time per step ms: %.3f\n", r.seconds / static_cast<double>(p.steps) * 1e3);
  apps::print_checksum(sum_in_order(r.sums));
  return 0;
}

/// Rank 0: compares the gathered wavefield with a serial run.
bool check_against_serial(const minimod::problem& p, const std::vector<double>& field) {
  const serial_run ref = run_serial_propagation(p);
  if (std::memcmp(ref.values.data(), field.data(), field.size() * sizeof(double)) == 0) {
    std::printf("check: wavefield bitwise identical to the serial run: passed\n");
    return true;
  }
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < field.size(); ++i) {
    diff = std::max(diff, std::abs(field[i] - ref.values[i]));
    scale = std::max(scale, std::abs(ref.values[i]));
  }
  const double rel = scale > 0 ? diff / scale : diff;
  const bool ok = rel <= check_tolerance;
  std::printf("check: wavefield differs from the serial run, max |diff| / max |u| = %.3e (tolerance %.0e): %s\n", rel,
              check_tolerance, ok ? "passed" : "FAILED");
  return ok;
}

int run_mpi(const minimod::problem& p, bool check, int me, int nranks) {
  const minimod::slab s = minimod::split(p, nranks, me);
  std::vector<double> u(s.size(), 0.0), u_prev(s.size(), 0.0);
  mpi_halo halo(s, me, nranks);
  MPI_Barrier(MPI_COMM_WORLD);
  const minimod::run_result r = minimod::propagate(p, s, u.data(), u_prev.data(), halo);

  // Every rank's (loop, exchange) seconds; rank 0 reports the slowest.
  const std::array<double, 2> mine = {r.seconds, r.exchange_seconds};
  std::vector<double> times(me == 0 ? 2 * static_cast<std::size_t>(nranks) : 0);
  MPI_Gather(mine.data(), 2, MPI_DOUBLE, times.data(), 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);

  // Plane sums (and for -check the owned values) gathered in rank order,
  // which is x order.
  auto gather = [&](const std::vector<double>& part) {
    const int n = static_cast<int>(part.size());
    std::vector<int> counts(static_cast<std::size_t>(nranks)), displs(counts.size());
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::partial_sum(counts.begin(), counts.end() - 1, displs.begin() + 1);
    std::vector<double> all(me == 0 ? static_cast<std::size_t>(displs.back() + counts.back()) : 0);
    MPI_Gatherv(part.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return all;
  };
  const std::vector<double> sums = gather(minimod::plane_sums(s, r.field));
  std::vector<double> field;
  if (check) field = gather(minimod::owned_values(s, r.field));

  int rc = 0;
  if (me == 0) {
    print_header("mpi", nranks, p);
    std::size_t slowest = 0;
    for (std::size_t i = 1; i < static_cast<std::size_t>(nranks); ++i)
      if (times[2 * i] > times[2 * slowest]) slowest = i;
    const double per_step = 1e3 / static_cast<double>(p.steps);
    std::printf("time per step ms: %.3f (halo exchange %.3f) [slowest rank, %zu]\n", times[2 * slowest] * per_step,
                times[2 * slowest + 1] * per_step, slowest);
    if (check) rc = check_against_serial(p, field) ? 0 : 1;
    apps::print_checksum(sum_in_order(sums));
  }
  return apps::rank0_status(rc);
}

}  // namespace

int main(int argc, char** argv) {
  const apps::mpi_environment mpi(argc, argv);
  options o;
  const std::array ints = {apps::int_option{"-nx", &o.nx, 1}, apps::int_option{"-ny", &o.ny, 1},
                           apps::int_option{"-nz", &o.nz, 1}, apps::int_option{"-steps", &o.steps, 1}};
  const std::array flags = {apps::flag_option{"-check", &o.check}, apps::flag_option{"-serial", &o.serial}};
  std::string error = apps::parse_options(argc, argv, ints, flags);
  if (error.empty()) error = apps::serial_needs_one_rank(o.serial, mpi.size);
  if (error.empty() && o.nx / mpi.size < minimod::radius)
    error = "-nx " + std::to_string(o.nx) + " over " + std::to_string(mpi.size) +
            " ranks leaves fewer than 4 planes on a rank; the halo exchange needs at least 4 planes per rank";
  if (error.empty() && o.check && o.nx * o.ny * o.nz > std::numeric_limits<int>::max())
    error = "-check gathers the whole wavefield (an MPI count, int): at most " +
            std::to_string(std::numeric_limits<int>::max()) + " points";
  if (!error.empty())
    return apps::refuse(mpi, "minimod_mpi", error,
                        "usage: mpiexec -n P minimod_mpi [-nx X -ny Y -nz Z] [-steps S] [-check]\n"
                        "       minimod_mpi -serial [-nx X -ny Y -nz Z] [-steps S]\n");
  const minimod::problem p = minimod::make_problem(o.nx, o.ny, o.nz, o.steps);
  return o.serial ? run_serial(p) : run_mpi(p, o.check, mpi.rank, mpi.size);
}
