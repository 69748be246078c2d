#include "minimod_kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <utility>

namespace minimod {

namespace {

// Second-derivative coefficients (times h^2), centre and distance 1..4.
constexpr double c_centre = -205.0 / 72, c1 = 8.0 / 5, c2 = -1.0 / 5, c3 = 8.0 / 315, c4 = -1.0 / 560;
constexpr double courant = 0.35;
constexpr double sigma_max = 0.2;  // damping per step at the faces

/// sigma along one axis of n points: 0 inside, rising quadratically to
/// sigma_max over the `width` points next to each face.
std::vector<double> damping_profile(long n, long width) {
  std::vector<double> sigma(static_cast<std::size_t>(n), 0.0);
  for (long i = 0; i < n; ++i) {
    const long d = std::min(i, n - 1 - i);
    if (d < width) {
      const double f = static_cast<double>(width - d) / static_cast<double>(width);
      sigma[static_cast<std::size_t>(i)] = sigma_max * f * f;
    }
  }
  return sigma;
}

double ricker(double t, double f0, double t0) {
  const double a = std::numbers::pi * f0 * (t - t0);
  return (1 - 2 * a * a) * std::exp(-a * a);
}

/// u_prev <- u_next for the owned planes of the slab.
void step(const problem& p, const slab& s, const double* u, double* u_prev, const std::vector<double>& sx,
          const std::vector<double>& sy, const std::vector<double>& sz) {
  const double cfl2 = (p.velocity * p.dt / p.h) * (p.velocity * p.dt / p.h);
  const long R = s.row(), P = s.plane();
  for (long lx = 0; lx < s.nx; ++lx) {
    const double sigma_x = sx[static_cast<std::size_t>(s.x0 + lx)];
    for (long y = 0; y < s.ny; ++y) {
      const double sigma_xy = sigma_x + sy[static_cast<std::size_t>(y)];
      const long base = s.index(lx, y, 0);
      const double* c = u + base;
      double* prev = u_prev + base;
      const double* sigma_z = sz.data();
      for (long z = 0; z < s.nz; ++z) {
        const double* q = c + z;
        const double lap = 3 * c_centre * q[0] +
                           c1 * (q[1] + q[-1] + q[R] + q[-R] + q[P] + q[-P]) +
                           c2 * (q[2] + q[-2] + q[2 * R] + q[-2 * R] + q[2 * P] + q[-2 * P]) +
                           c3 * (q[3] + q[-3] + q[3 * R] + q[-3 * R] + q[3 * P] + q[-3 * P]) +
                           c4 * (q[4] + q[-4] + q[4 * R] + q[-4 * R] + q[4 * P] + q[-4 * P]);
        const double sigma = sigma_xy + sigma_z[z];
        prev[z] = (2 * q[0] - (1 - sigma) * prev[z] + cfl2 * lap) / (1 + sigma);
      }
    }
  }
}

}  // namespace

problem make_problem(long nx, long ny, long nz, long steps) {
  problem p;
  p.nx = nx;
  p.ny = ny;
  p.nz = nz;
  p.steps = steps;
  p.dt = courant * p.h / p.velocity;
  // Dominant wavelength v / f0 = 7 h: f0 = v / (7 h), i.e. 1 / (20 dt).
  p.f0 = p.velocity / (7 * p.h);
  p.t0 = 1 / p.f0;
  p.sponge = std::max(1L, std::min({nx, ny, nz}) / 8);
  p.src_x = nx / 2;
  p.src_y = ny / 2;
  p.src_z = nz / 2;
  return p;
}

slab split(const problem& p, int nranks, int rank) {
  const long base = p.nx / nranks, extra = p.nx % nranks;
  slab s;
  s.nx = base + (rank < extra ? 1 : 0);
  s.x0 = rank * base + std::min<long>(rank, extra);
  s.ny = p.ny;
  s.nz = p.nz;
  return s;
}

run_result propagate(const problem& p, const slab& s, double* u, double* u_prev, halo_exchange& halo) {
  using clk = std::chrono::steady_clock;
  const std::vector<double> sx = damping_profile(p.nx, p.sponge), sy = damping_profile(p.ny, p.sponge),
                            sz = damping_profile(p.nz, p.sponge);
  const bool has_source = p.src_x >= s.x0 && p.src_x < s.x0 + s.nx;
  const double cfl2 = (p.velocity * p.dt / p.h) * (p.velocity * p.dt / p.h);
  run_result r;
  const auto t_start = clk::now();
  for (long it = 0; it < p.steps; ++it) {
    const auto t_halo = clk::now();
    halo.exchange(u);
    r.exchange_seconds += std::chrono::duration<double>(clk::now() - t_halo).count();
    step(p, s, u, u_prev, sx, sy, sz);
    if (has_source)
      u_prev[s.index(p.src_x - s.x0, p.src_y, p.src_z)] += cfl2 * ricker(static_cast<double>(it) * p.dt, p.f0, p.t0);
    std::swap(u, u_prev);
  }
  r.seconds = std::chrono::duration<double>(clk::now() - t_start).count();
  r.field = u;
  return r;
}

std::vector<double> plane_sums(const slab& s, const double* u) {
  std::vector<double> sums;
  sums.reserve(static_cast<std::size_t>(s.nx));
  for (long lx = 0; lx < s.nx; ++lx) {
    double sum = 0;
    for (long y = 0; y < s.ny; ++y)
      for (long z = 0; z < s.nz; ++z) {
        const double v = u[s.index(lx, y, z)];
        sum += v * v;
      }
    sums.push_back(sum);
  }
  return sums;
}

std::vector<double> owned_values(const slab& s, const double* u) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(s.nx * s.ny * s.nz));
  for (long lx = 0; lx < s.nx; ++lx)
    for (long y = 0; y < s.ny; ++y)
      for (long z = 0; z < s.nz; ++z) out.push_back(u[s.index(lx, y, z)]);
  return out;
}

}  // namespace minimod
