// Minimod's acoustic propagator on weft's global memory: the grid split
// into slabs of x planes, one per rank, both wavefields in symmetric blocks
// (the same offsets on every rank). Before every step each rank puts its
// first and last 4 planes straight into its neighbours' halo planes; a
// barrier then says that every halo has arrived. Strong scaling: the grid
// is fixed.
//
//   minimod_weft --weft:ranks=P --weft:threads=1 [-nx 64 -ny 64 -nz 64] [-steps 20] [-check]   (smp backend)
//   mpiexec -n P minimod_weft [-nx ... -steps ...] [-check]                                      (mpi backend)
//   minimod_weft -serial [-nx ... -steps ...]     serial reference
//
// Same options, output and checks as minimod_mpi (minimod_frame.hpp).
#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "../common/app_frame.hpp"
#include "minimod_frame.hpp"
#include "minimod_kernels.hpp"
#include "weft/weft.hpp"

namespace {

/// Rank 0: the parts of every rank, in rank order (which is x order).
std::vector<double> gather_in_order(const std::vector<double>& part) {
  std::vector<double> all;
  for (const std::vector<double>& p : weft::gather(part, 0)) all.insert(all.end(), p.begin(), p.end());
  return all;
}

int run_weft(const minimod::problem& p, bool check) {
  const int me = weft::rank(), nranks = weft::nranks();
  const minimod::slab s = minimod::split(p, nranks, me);
  // Blocks of the largest slab (rank 0's): a symmetric block has one size.
  const std::size_t block = minimod::split(p, nranks, 0).size();
  const weft::global_ptr<double> u = weft::allocate_symmetric<double>(block);
  const weft::global_ptr<double> u_prev = weft::allocate_symmetric<double>(block);
  std::fill_n(u.local(), block, 0.0);
  std::fill_n(u_prev.local(), block, 0.0);

  // halo-exchange: begin (apps/count_halo_lines.sh counts the code lines to the end marker)
  // `field` is u or u_prev: the two swap on every rank in step, so the
  // neighbours' copy of it sits at the same offset.
  const long below_top = me > 0 ? minimod::split(p, nranks, me - 1).nx + minimod::radius : 0;  // its upper halo
  minimod::halo_function halo([&](double* field) {
    const auto mine = weft::global_ptr<double>::from_local(field);
    const std::span<const double> first(field + s.plane_offset(0), minimod::radius * s.plane()),
        last(field + s.plane_offset(s.nx - minimod::radius), first.size());
    if (me > 0) weft::put(mine.on(me - 1) + below_top * s.plane(), first);
    if (me + 1 < nranks) weft::put(mine.on(me + 1), last);  // its lower halo: the block's start
    weft::fence();    // this rank's planes are in the neighbours' halos
    weft::barrier();  // every rank's are (and every rank is done with the step that read them)
  });
  // halo-exchange: end

  weft::barrier();
  const minimod::run_result r = minimod::propagate(p, s, u.local(), u_prev.local(), halo);
  const std::vector<minimod::rank_times> times = weft::gather(minimod::rank_times{r.seconds, r.exchange_seconds}, 0);
  const std::vector<double> sums = gather_in_order(minimod::plane_sums(s, r.field));
  const std::vector<double> field = check ? gather_in_order(minimod::owned_values(s, r.field)) : std::vector<double>{};
  weft::free_symmetric(u_prev);
  weft::free_symmetric(u);
  const int rc = me == 0 ? minimod::report("weft", p, times, check, field, sums) : 0;
  return weft::broadcast(rc, 0);
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [](int ac, char** av) {
    minimod::options o;
    const std::string error = minimod::parse_options(ac, av, weft::nranks(), o);
    if (!error.empty())
      return apps::refuse(weft::rank(), "minimod_weft", error,
                          "usage: minimod_weft --weft:ranks=P [-nx X -ny Y -nz Z] [-steps S] [-check]  (smp backend)\n"
                          "       mpiexec -n P minimod_weft [-nx X -ny Y -nz Z] [-steps S] [-check]  (mpi backend)\n"
                          "       minimod_weft -serial [-nx X -ny Y -nz Z] [-steps S]\n");
    const minimod::problem p = minimod::make_problem(o.nx, o.ny, o.nz, o.steps);
    return o.serial ? minimod::run_serial(p) : run_weft(p, o.check);
  });
}
