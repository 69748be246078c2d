// The acoustic isotropic constant-density propagator of Minimod, the parts
// every version shares: the problem (grid, velocity, time step, Ricker
// source, absorbing layers), the block split along x, the 8th-order star
// stencil with leap-frog time stepping, and the checksum. A version
// supplies the storage of the two wavefields and the halo exchange.
//
// Equation: u_tt = v^2 lap(u) + source. Discretization: second derivatives
// by the radius-4 stencil (-205/72, 8/5, -1/5, 8/315, -1/560) / h^2 along
// each axis, leap-frog in time. Absorbing layers: a damping term sigma(x)
// u_t that grows quadratically towards the domain's faces, applied as
//   u_next = (2 u - (1 - sigma) u_prev + (v dt / h)^2 lap(u)) / (1 + sigma).
// Outside the domain u = 0.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace minimod {

/// Stencil radius: halo planes per side.
constexpr long radius = 4;

struct problem {
  long nx = 0, ny = 0, nz = 0;  // global grid; x is the slowest axis
  long steps = 0;
  double h = 10;                // grid spacing, m
  double velocity = 1500;       // m/s
  double dt = 0;                // s
  double f0 = 0, t0 = 0;        // Ricker peak frequency (Hz) and delay (s)
  long sponge = 0;              // absorbing layer width, points
  long src_x = 0, src_y = 0, src_z = 0;
};

/// The problem on an nx x ny x nz grid: dt at a Courant number of 0.35
/// (the stable limit of this scheme in 3-D is about 0.45), a source at the
/// centre with a dominant wavelength of about 7 points.
problem make_problem(long nx, long ny, long nz, long steps);

/// One rank's block of x planes [x0, x0 + nx), stored with `radius` halo
/// planes on each side along x and `radius` zero cells on each side along
/// y and z. Halo planes are contiguous: plane() elements each.
struct slab {
  long x0 = 0, nx = 0, ny = 0, nz = 0;

  long row() const { return nz + 2 * radius; }
  long plane() const { return (ny + 2 * radius) * row(); }
  std::size_t size() const { return static_cast<std::size_t>((nx + 2 * radius) * plane()); }
  /// Element (lx, y, z) for a local plane lx in [-radius, nx + radius).
  long index(long lx, long y, long z) const { return (lx + radius) * plane() + (y + radius) * row() + z + radius; }
  /// Start of local plane lx, padding included.
  long plane_offset(long lx) const { return (lx + radius) * plane(); }
};

/// Block split of the x planes over `nranks`, the first nx % nranks ranks
/// holding one plane more.
slab split(const problem& p, int nranks, int rank);

/// Fills the halo planes [-radius, 0) and [nx, nx + radius) of `u` from
/// the neighbouring slabs (at the domain's faces they stay zero).
class halo_exchange {
 public:
  virtual void exchange(double* u) = 0;

 protected:
  ~halo_exchange() = default;
};

struct run_result {
  double* field = nullptr;        // the wavefield after the last step
  double seconds = 0;             // whole time loop
  double exchange_seconds = 0;    // of which in halo exchanges
};

/// Runs p.steps leap-frog steps. `u` and `u_prev` hold s.size() zeros on
/// entry; the caller owns them (so it can place them where neighbours can
/// write). The result is one of the two.
run_result propagate(const problem& p, const slab& s, double* u, double* u_prev, halo_exchange& halo);

/// Sum of squares of each owned plane, in x order. Summing these over all
/// ranks in x order gives a checksum independent of the split.
std::vector<double> plane_sums(const slab& s, const double* u);

/// The owned part of `u` (nx * ny * nz values, x slowest) without halos.
std::vector<double> owned_values(const slab& s, const double* u);

/// The halo exchange of a run on one rank: nothing to exchange.
class no_exchange final : public halo_exchange {
 public:
  void exchange(double*) override {}
};

/// A halo exchange given as a callable (a lambda over the caller's slab
/// and neighbours).
class halo_function final : public halo_exchange {
 public:
  explicit halo_function(std::function<void(double*)> fill) : fill_(std::move(fill)) {}
  void exchange(double* u) override { fill_(u); }

 private:
  std::function<void(double*)> fill_;
};

}  // namespace minimod
