// One-sided communication (weft::rma): the 1-D heat equation on a ring of
// ranks. Each step, every rank puts its edge cells straight into its
// neighbours' ghost cells with a notification, and waits for the two
// notifications meant for it; at the end rank 0 fetches every rank's field
// with gets and compares it with a serial run. Runs unchanged on both
// backends:
//
//   ./example_rma --weft:ranks=4          # 4 ranks in this process (smp)
//   mpiexec -n 4 ./example_rma            # 4 processes (mpi)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "weft/weft.hpp"

namespace rma = weft::rma;

namespace {

constexpr int cells = 64;  // per rank
constexpr int steps = 200;
constexpr double alpha = 0.25;

// Ghost cells, one pair per step parity: a neighbour can be at most one step
// ahead (it needs my edge of step s before it can send step s + 1), so it
// never overwrites the slot I am still reading.
struct ghosts {
  double from_left[2];
  double from_right[2];
};

double initial(long global_cell) { return global_cell % 8 == 0 ? 8.0 : 0.0; }

// The same update, term for term, in the distributed and the serial run, so
// the results agree bit for bit.
double update(double l, double c, double r) { return c + alpha * (l - 2 * c + r); }

std::vector<double> serial_run(int ranks) {
  const int n = ranks * cells;
  std::vector<double> u(n), next(n);
  for (int g = 0; g < n; ++g) u[g] = initial(g);
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < n; ++i) next[i] = update(u[(i + n - 1) % n], u[i], u[(i + 1) % n]);
    u.swap(next);
  }
  return u;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const int me = weft::rank(), n = weft::nranks();
    const int left = (me + n - 1) % n, right = (me + 1) % n;

    std::vector<double> u(cells), next(cells);
    for (int i = 0; i < cells; ++i) u[i] = initial(long(me) * cells + i);
    ghosts halo{};

    // Every rank registers the same buffers in the same order, so the ids
    // agree everywhere (halo: 0, field: 1) without any exchange.
    rma::completion_queue arrivals;
    rma::segment halo_seg = rma::register_memory(&halo, sizeof halo, &arrivals);
    rma::segment field_seg = rma::register_memory(u.data(), cells * sizeof(double));
    weft::barrier();  // registered everywhere before the first put

    std::vector<int> arrived(steps, 0);  // notifications per step (tag = step)
    for (int s = 0; s < steps; ++s) {
      const std::size_t slot = std::size_t(s % 2) * sizeof(double);
      const rma::put_options o{.level = rma::completion_level::local, .notify = std::uint64_t(s)};
      auto to_left = rma::put(left, halo_seg.id(), offsetof(ghosts, from_right) + slot, &u[0], sizeof(double), o);
      auto to_right =
          rma::put(right, halo_seg.id(), offsetof(ghosts, from_left) + slot, &u[cells - 1], sizeof(double), o);
      while (arrived[s] < 2) ++arrived[arrivals.wait().context];  // a neighbour may already send step s + 1
      to_left.get();  // local completion: the edges were read, u may change
      to_right.get();
      for (int i = 0; i < cells; ++i) {
        const double l = i == 0 ? halo.from_left[s % 2] : u[i - 1];
        const double r = i == cells - 1 ? halo.from_right[s % 2] : u[i + 1];
        next[i] = update(l, u[i], r);
      }
      std::memcpy(u.data(), next.data(), sizeof(double) * cells);  // u itself is registered: copy, do not swap
    }

    double mine = 0;
    for (double v : u) mine += v;
    const double total = weft::allreduce(mine, std::plus<>{});  // also: every rank finished its steps

    if (me == 0) {
      // Gather the field with one get per rank, completions in one queue.
      std::vector<double> all(std::size_t(n) * cells);
      rma::completion_queue done;
      for (int r = 0; r < n; ++r)
        rma::get(r, field_seg.id(), 0, &all[std::size_t(r) * cells], cells * sizeof(double), done, std::uint64_t(r));
      for (int r = 0; r < n; ++r) done.wait();
      const std::vector<double> ref = serial_run(n);
      const bool same = std::memcmp(all.data(), ref.data(), sizeof(double) * all.size()) == 0;
      const bool conserved = std::fabs(total - double(n) * cells) < 1e-9 * n * cells;
      std::printf("heat on a ring of %d ranks x %d cells, %d steps, halos by notified puts: total heat %.6f "
                  "(conserved: %s); field gathered by gets matches the serial run: %s\n",
                  n, cells, steps, total, conserved ? "yes" : "no", same ? "yes" : "no");
    }
    weft::barrier();  // rank 0 has read every field: now they may go
    rma::deregister(field_seg);
    rma::deregister(halo_seg);
  });
}
