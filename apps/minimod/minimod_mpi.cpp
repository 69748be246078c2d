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

#include <array>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "../common/mpi_app.hpp"
#include "minimod_frame.hpp"
#include "minimod_kernels.hpp"

namespace {

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

int run_mpi(const minimod::problem& p, bool check, int me, int nranks) {
  const minimod::slab s = minimod::split(p, nranks, me);
  std::vector<double> u(s.size(), 0.0), u_prev(s.size(), 0.0);
  mpi_halo halo(s, me, nranks);
  MPI_Barrier(MPI_COMM_WORLD);
  const minimod::run_result r = minimod::propagate(p, s, u.data(), u_prev.data(), halo);

  // Every rank's (loop, exchange) seconds; rank 0 reports the slowest.
  const minimod::rank_times mine = {r.seconds, r.exchange_seconds};
  std::vector<minimod::rank_times> times(me == 0 ? static_cast<std::size_t>(nranks) : 0);
  MPI_Gather(&mine, 2, MPI_DOUBLE, times.data(), 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);

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

  const int rc = me == 0 ? minimod::report("mpi", p, times, check, field, sums) : 0;
  return apps::rank0_status(rc);
}

}  // namespace

int main(int argc, char** argv) {
  const apps::mpi_environment mpi(argc, argv);
  minimod::options o;
  std::string error = minimod::parse_options(argc, argv, mpi.size, o);
  if (error.empty() && o.check && o.nx * o.ny * o.nz > std::numeric_limits<int>::max())
    error = "-check gathers the whole wavefield (an MPI count, int): at most " +
            std::to_string(std::numeric_limits<int>::max()) + " points";
  if (!error.empty())
    return apps::refuse(mpi, "minimod_mpi", error,
                        "usage: mpiexec -n P minimod_mpi [-nx X -ny Y -nz Z] [-steps S] [-check]\n"
                        "       minimod_mpi -serial [-nx X -ny Y -nz Z] [-steps S]\n");
  const minimod::problem p = minimod::make_problem(o.nx, o.ny, o.nz, o.steps);
  return o.serial ? minimod::run_serial(p) : run_mpi(p, o.check, mpi.rank, mpi.size);
}
